import { findKakaoChannel } from '../../db/repos/kakao/kakao-channels.js'
import { findKakaoTemplate } from '../../db/repos/kakao/kakao-templates.js'
import type { AlimtalkFallback, SmsChannel, SmsPurpose, StoredRecipient } from '../../db/schema.js'
import type { TenantTx } from '../../db/tenant-transaction.js'
import { AppError, type FieldError } from '../errors.js'
import { isEucKrText, smsByteLength, SMS_MAX_BYTES, type MessageEstimate } from '../sms/sizing.js'
import { characterCount } from '../text/character-count.js'
import { layeredValue, renderAlimtalk } from './template-variables.js'

/** A KakaoTalk notice's text after rendering, for any recipient, is at most this many characters. */
export const ALIMTALK_MAX_CHARACTERS = 1000

type Variables = Record<string, string>

/** The fields of a send's body that choose and shape its channel (routes/v1/sms/sms.schemas.ts). */
export interface ChannelFields {
  channel?: SmsChannel
  content?: string
  templateId?: number | null
  kakaoTemplateId?: number | null
  variables?: Variables | null
  fallback?: AlimtalkFallback
  purpose?: SmsPurpose
  recipients?: readonly { variables?: Variables | null }[] | null
}

/** What an AlimTalk send keeps from its acceptance (sms_messages.kakao_*, fallback). */
export interface AlimtalkDraft {
  kakaoTemplateId: number
  /** Frozen: the channel and the provider's template the hand-over sends. */
  pfId: string
  providerTemplateId: string
  /** The template's `#{name}` variables, in order of first use. */
  templateVariables: readonly string[]
  /** For every recipient; each recipient's own (`recipientVariables`) win. */
  variables: Variables
  /** By index of the send's listed recipients; none for a group or a class. */
  recipientVariables: readonly (Variables | null | undefined)[]
  fallback: AlimtalkFallback
}

/** The send's text and, for AlimTalk, what it keeps: content is the Kakao template's, unrendered. */
export type SendChannel = { content: string; alimtalk: AlimtalkDraft | null }

function invalid(errors: FieldError[]): AppError {
  return new AppError('VALIDATION_FAILED', errors.map((entry) => `${entry.field} ${entry.message}`).join('; '), { errors })
}

/**
 * The body's channel rules (docs/api.md#sending-alimtalk). SMS: `content` required as always, the AlimTalk fields
 * refused. ALIMTALK: `content` and `templateId` absent, an informational notice only, a template of the tenant that the
 * provider APPROVED, and a linked channel (409 here: a state to fix first, where reading the channel answers 404) that
 * the template was imported under.
 * `null` counts as absent, as elsewhere in a send.
 */
export async function sendChannel(trx: TenantTx, body: ChannelFields): Promise<SendChannel> {
  const given = (field: keyof ChannelFields) => body[field] !== undefined && body[field] !== null
  if ((body.channel ?? 'SMS') === 'SMS') {
    const errors: FieldError[] = []
    if (!given('content')) errors.push({ field: 'body.content', message: "must have required property 'content'" })
    for (const field of ['kakaoTemplateId', 'variables', 'fallback'] as const) {
      if (given(field)) errors.push({ field: `body.${field}`, message: 'is only for channel ALIMTALK' })
    }
    for (const [index, recipient] of (body.recipients ?? []).entries()) {
      if (recipient.variables != null) errors.push({ field: `body.recipients.${index}.variables`, message: 'is only for channel ALIMTALK' })
    }
    if (errors.length > 0) throw invalid(errors)
    return { content: body.content!, alimtalk: null }
  }

  const errors: FieldError[] = []
  if (!given('kakaoTemplateId')) errors.push({ field: 'body.kakaoTemplateId', message: "must have required property 'kakaoTemplateId'" })
  for (const field of ['content', 'templateId'] as const) {
    if (given(field)) errors.push({ field: `body.${field}`, message: 'must be absent with channel ALIMTALK (the Kakao template is the text)' })
  }
  if (errors.length > 0) throw invalid(errors)
  if (body.purpose === 'ADVERTISEMENT') throw new AppError('ALIMTALK_NOT_FOR_ADVERTISING')

  const template = await findKakaoTemplate(trx, body.kakaoTemplateId!)
  if (!template) throw new AppError('KAKAO_TEMPLATE_NOT_FOUND', `No Kakao template ${body.kakaoTemplateId} in this academy.`)
  if (template.status !== 'APPROVED') {
    throw new AppError('KAKAO_TEMPLATE_NOT_APPROVED', `Kakao template ${template.id} is ${template.status}; only an APPROVED one can be sent.`)
  }
  const channel = await findKakaoChannel(trx)
  if (!channel) throw new AppError('KAKAO_CHANNEL_NOT_FOUND', 'Link a Kakao channel before sending AlimTalk.', { status: 409 })
  // A copy read under a channel since replaced: the provider would refuse it for the linked channel.
  if (template.pfId !== channel.pfId) {
    throw new AppError(
      'KAKAO_TEMPLATE_UNKNOWN',
      `Kakao template ${template.id} was imported under another channel than the linked one; import the linked channel's template.`,
    )
  }
  return {
    content: template.content,
    alimtalk: {
      kakaoTemplateId: template.id,
      pfId: channel.pfId,
      providerTemplateId: template.providerTemplateId,
      templateVariables: template.variables,
      variables: body.variables ?? {},
      recipientVariables: (body.recipients ?? []).map((recipient) => recipient.variables),
      fallback: body.fallback ?? 'SMS',
    },
  }
}

/** A recipient of an AlimTalk with what the hand-over needs of it and the text it gets. */
export type AlimtalkRecipient = StoredRecipient & { variables: Variables; text: string }

const NO_VARIABLES: Variables = Object.freeze({}) as Variables

/**
 * Each recipient's values and text. Its own variables win over the request's, which win over the defaults `name`
 * and `className` (the recipient's fields). What is stored per recipient is its own values plus the defaults the
 * request did not override, so the hand-over renders the message's values under the recipient's and needs nothing
 * else. A template variable without a value for some recipient, or a text over 1,000 characters, refuses the send,
 * naming the variable or the limit and the recipient's place in the list. Objects are written out field by field,
 * not spread: a spread costs a microsecond or two, and a send has 10,000 recipients.
 */
export function personalise(content: string, recipients: readonly StoredRecipient[], alimtalk: AlimtalkDraft): AlimtalkRecipient[] {
  const shared = alimtalk.variables
  // A default applies only where the request does not give the value (and the recipient's own wins over both).
  const defaultName = alimtalk.templateVariables.includes('name') && !Object.hasOwn(shared, 'name')
  const defaultClassName = alimtalk.templateVariables.includes('className') && !Object.hasOwn(shared, 'className')
  const personalised: AlimtalkRecipient[] = new Array(recipients.length)
  for (let index = 0; index < recipients.length; index++) {
    const recipient = recipients[index]!
    const own = alimtalk.recipientVariables[index] ?? NO_VARIABLES
    const name = defaultName && recipient.name !== null && !Object.hasOwn(own, 'name')
    const className = defaultClassName && recipient.className !== null && !Object.hasOwn(own, 'className')
    let variables = own
    if (name || className) {
      variables = {}
      if (name) variables.name = recipient.name!
      if (className) variables.className = recipient.className!
      Object.assign(variables, own)
    }
    for (const variable of alimtalk.templateVariables) {
      if (layeredValue([shared, variables], variable) === undefined) {
        throw new AppError('KAKAO_VARIABLES_MISSING', `The template variable #{${variable}} has no value for recipient ${index}.`, {
          errors: [{ field: `variables.${variable}`, message: `has no value for recipient ${index}` }],
        })
      }
    }
    const text = renderAlimtalk(content, shared, variables)
    const characters = characterCount(text)
    if (characters > ALIMTALK_MAX_CHARACTERS) {
      throw new AppError(
        'CONTENT_TOO_LONG',
        `The rendered AlimTalk is ${characters} characters for recipient ${index}; the limit is ${ALIMTALK_MAX_CHARACTERS} characters.`,
      )
    }
    personalised[index] = {
      phone: recipient.phone,
      name: recipient.name,
      studentId: recipient.studentId,
      className: recipient.className,
      recipientRole: recipient.recipientRole,
      variables: variables === NO_VARIABLES ? {} : variables,
      text,
    }
  }
  return personalised
}

/**
 * An AlimTalk's price at acceptance: `price` per recipient. Its type is the one its fallback would take: SMS when
 * every text fits 90 bytes in EUC-KR, else LMS (1,000 characters are at most 2,000 bytes, LMS's limit).
 */
export function alimtalkEstimate(texts: readonly string[], price: number): MessageEstimate {
  let maxBytes = 0
  let eucKr = true
  for (const text of texts) {
    maxBytes = Math.max(maxBytes, smsByteLength(text))
    eucKr &&= isEucKrText(text)
  }
  return {
    messageType: maxBytes <= SMS_MAX_BYTES && eucKr ? 'SMS' : 'LMS',
    estimatedSegments: texts.length,
    unitPrice: price,
    totalPrice: price * texts.length,
    maxBytes,
  }
}
