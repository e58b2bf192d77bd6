import type { FastifyBaseLogger } from 'fastify'
import type { KakaoChannelRecord } from '../../db/repos/kakao/kakao-channels.js'
import type { KakaoTemplateCopy } from '../../db/repos/kakao/kakao-templates.js'
import { serviceUnavailable } from '../catalog-errors.js'
import type { KakaoChannel, KakaoRead, KakaoReads, KakaoTemplate } from '../dispatch/providers/kakao-reads.js'
import { AppError } from '../errors.js'
import { templateVariables } from './template-variables.js'

/**
 * What a read of the provider means to a route: found, unknown (a 409 of the caller's making), or a provider that did
 * not answer usably, which is no fault of the caller: 503 SERVICE_UNAVAILABLE with Retry-After, the provider's words
 * kept in the log only.
 */
function found<T>(read: KakaoRead<T>, unknown: () => AppError, log: FastifyBaseLogger): T {
  if (read.kind === 'found') return read.value
  if (read.kind === 'unknown') throw unknown()
  log.warn({ providerError: read.error, failure: read.kind }, 'the provider did not answer a Kakao read')
  throw serviceUnavailable('The messaging provider could not be read; try again shortly.')
}

export async function channelFromProvider(reads: KakaoReads, pfId: string, log: FastifyBaseLogger): Promise<KakaoChannel> {
  const unknown = () => new AppError('KAKAO_CHANNEL_UNKNOWN', `The provider has no Kakao channel ${pfId}.`)
  return found(await reads.readChannel(pfId), unknown, log)
}

export async function templateFromProvider(reads: KakaoReads, templateId: string, log: FastifyBaseLogger): Promise<KakaoTemplate> {
  return found(await reads.readTemplate(templateId), () => templateUnknown(templateId), log)
}

function templateUnknown(templateId: string): AppError {
  return new AppError('KAKAO_TEMPLATE_UNKNOWN', `The provider has no template ${templateId} of the academy's Kakao channel.`)
}

export function channelMissing(): AppError {
  return new AppError('KAKAO_CHANNEL_NOT_FOUND', 'The academy has linked no Kakao channel; link it with PUT /v1/kakao/channel.')
}

/**
 * The copy to store of a template read from the provider, once it is known to be of the tenant's channel: one of
 * another channel is refused exactly like an unknown one, so an id never tells whether another channel has it.
 */
export function copyOfChannel(template: KakaoTemplate, channel: KakaoChannelRecord | undefined): KakaoTemplateCopy {
  if (!channel) throw channelMissing()
  if (template.channelId !== channel.pfId) throw templateUnknown(template.templateId)
  const { templateId, name, content, buttons, status } = template
  return { providerTemplateId: templateId, name, content, variables: templateVariables(content), buttons, status, pfId: channel.pfId }
}
