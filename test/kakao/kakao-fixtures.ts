import type { FastifyInstance } from 'fastify'
import type { Actor } from '../support/staff-fixtures.js'

/** Requests to the Kakao routes of `app()` as `who` (no one: no token). */
export function kakaoClient(app: () => FastifyInstance) {
  const call = (method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, who?: Actor, payload?: unknown) =>
    app().inject({ method, url, headers: who?.headers ?? {}, ...(payload === undefined ? {} : { payload: payload as object }) })
  return {
    getChannel: (who?: Actor) => call('GET', '/v1/kakao/channel', who),
    putChannel: (who: Actor | undefined, payload: unknown) => call('PUT', '/v1/kakao/channel', who, payload),
    deleteChannel: (who?: Actor) => call('DELETE', '/v1/kakao/channel', who),
    importTemplate: (who: Actor | undefined, payload: unknown) => call('POST', '/v1/kakao/templates', who, payload),
    listTemplates: (who?: Actor) => call('GET', '/v1/kakao/templates', who),
    getTemplate: (who: Actor | undefined, id: number | string) => call('GET', `/v1/kakao/templates/${id}`, who),
    refreshTemplate: (who: Actor | undefined, id: number | string) => call('POST', `/v1/kakao/templates/${id}/refresh`, who),
    deleteTemplate: (who: Actor | undefined, id: number | string) => call('DELETE', `/v1/kakao/templates/${id}`, who),
  }
}
