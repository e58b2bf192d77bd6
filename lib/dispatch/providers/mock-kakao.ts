import type { KakaoReads, KakaoTemplate } from './kakao-reads.js'

/** The channel the mock's templates were written for: link it to import them (docs/api.md#importing-templates). */
export const MOCK_KAKAO_CHANNEL = 'mock-channel'

/** The mock's fixed catalog, documented in docs/api.md#importing-templates. */
export const MOCK_KAKAO_TEMPLATES: readonly KakaoTemplate[] = [
  {
    templateId: 'mock-attendance',
    channelId: MOCK_KAKAO_CHANNEL,
    name: '출결 알림',
    content: '[출결 알림] #{name} 학생이 #{time}에 #{className} 수업에 출석했습니다.',
    status: 'APPROVED',
    buttons: [],
  },
  {
    templateId: 'mock-payment',
    channelId: MOCK_KAKAO_CHANNEL,
    name: '수강료 납부 안내',
    content: '[수강료 안내] #{name} 학생의 #{month} 수강료 #{amount}원이 납부되었습니다. #{name} 학생의 수업 일정은 아래에서 확인하세요.',
    status: 'APPROVED',
    buttons: [{ buttonType: 'WL', buttonName: '수업 일정', linkMo: 'https://example.com/schedule', linkPc: 'https://example.com/schedule' }],
  },
  {
    templateId: 'mock-exam',
    channelId: MOCK_KAKAO_CHANNEL,
    name: '시험 일정 안내',
    content: '[시험 안내] #{name} 학생의 #{examName} 시험이 #{date}에 있습니다.',
    status: 'INSPECTING',
    buttons: [],
  },
]

/**
 * The mock's Kakao reads: every pfId names a channel (its searchId is the pfId), and the templates are the fixed
 * catalog above; any other template id is unknown.
 */
export function createMockKakaoReads(): KakaoReads {
  return {
    name: 'mock',
    async readChannel(pfId) {
      return { kind: 'found', value: { pfId, searchId: pfId } }
    },
    async readTemplate(templateId) {
      const template = MOCK_KAKAO_TEMPLATES.find((entry) => entry.templateId === templateId)
      // A copy: a caller may keep what it read without changing the catalog.
      return template ? { kind: 'found', value: structuredClone(template) } : { kind: 'unknown' }
    },
  }
}
