import { Type, type Static } from '@sinclair/typebox'
import { KAKAO_TEMPLATE_STATUSES } from '../../../lib/dispatch/providers/kakao-reads.js'
import { PathIdSchema } from '../../../lib/http/id-schema.js'
import { StringEnum } from '../../../lib/http/response-types.js'

// The provider's ids are letters, digits, `_` and `-` (KA01PF..., KA01TP...); bounded, and safe in its URL path.
const ProviderId = (description: string) => Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$', description })

export const PutKakaoChannelBodySchema = Type.Object(
  { pfId: ProviderId("The channel's id at the provider (its channelId)") },
  { additionalProperties: false, examples: [{ pfId: 'KA01PF2611290000000000000000ACAD' }] },
)
export type PutKakaoChannelBody = Static<typeof PutKakaoChannelBodySchema>

export const KakaoChannelSchema = Type.Object(
  { pfId: Type.String(), searchId: Type.String() },
  { $id: 'KakaoChannel', examples: [{ pfId: 'KA01PF2611290000000000000000ACAD', searchId: 'sunshine-academy' }] },
)
export type KakaoChannel = Static<typeof KakaoChannelSchema>

export const ImportKakaoTemplateBodySchema = Type.Object(
  { providerTemplateId: ProviderId("The template's id at the provider") },
  { additionalProperties: false, examples: [{ providerTemplateId: 'mock-attendance' }] },
)
export type ImportKakaoTemplateBody = Static<typeof ImportKakaoTemplateBodySchema>

export const KakaoTemplateIdParamsSchema = Type.Object({ id: PathIdSchema })

/** An imported template (docs/api.md#importing-templates): the provider's copy as of `refreshedAt`. */
export const KakaoTemplateSchema = Type.Object(
  {
    id: Type.Integer(),
    providerTemplateId: Type.String(),
    name: Type.String(),
    content: Type.String(),
    variables: Type.Array(Type.String(), { description: 'The names inside #{...} in content, in order of first use' }),
    buttons: Type.Array(Type.Unknown(), { description: 'As the provider gave them' }),
    status: StringEnum(KAKAO_TEMPLATE_STATUSES, { $id: 'KakaoTemplateStatus' }),
    refreshedAt: Type.String({ format: 'date-time' }),
  },
  {
    $id: 'KakaoTemplate',
    examples: [
      {
        id: 1,
        providerTemplateId: 'mock-attendance',
        name: '출결 알림',
        content: '[출결 알림] #{name} 학생이 #{time}에 #{className} 수업에 출석했습니다.',
        variables: ['name', 'time', 'className'],
        buttons: [],
        status: 'APPROVED',
        refreshedAt: '2026-11-29T06:00:00.000Z',
      },
    ],
  },
)
export type KakaoTemplate = Static<typeof KakaoTemplateSchema>
