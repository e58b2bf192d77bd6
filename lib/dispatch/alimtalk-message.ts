import type { ClaimedMessage, UnsentRecipient } from '../../db/repos/dispatch/dispatch.js'
import { kakaoText, layeredValue, renderAlimtalk } from '../kakao/template-variables.js'
import type { OutgoingSms } from './providers/provider.js'

/**
 * One recipient's AlimTalk notice (docs/provider.md#alimtalk-notices). The provider refuses a text that is not its
 * approved template with the variables substituted, so the text and the variables are made from the same values:
 * the recipient's own over the request's. Every value is a string on the wire. A variable without a value (which
 * acceptance refuses) stays as written, so the provider refuses that message instead of Kakao showing a blank.
 */
export function alimtalkMessage(message: ClaimedMessage, recipient: UnsentRecipient): OutgoingSms {
  const layers = [message.kakaoVariables ?? {}, recipient.variables ?? {}]
  const variables: Record<string, string> = {}
  for (const name of kakaoText(message.content).variables) {
    const value = layeredValue(layers, name)
    if (value !== undefined) variables[`#{${name}}`] = String(value)
  }
  const text = renderAlimtalk(message.content, ...layers)
  return {
    recipientIndex: recipient.recipientIndex,
    to: recipient.phone,
    from: message.senderNumber ?? '',
    text,
    type: 'ATA',
    kakao: {
      pfId: message.kakaoPfId ?? '',
      templateId: message.kakaoProviderTemplateId ?? '',
      variables,
      disableSms: message.fallback === 'NONE',
    },
  }
}
