import type { OneTimeCodePurpose } from '../../../db/schema.js'

// Korean, in characters EUC-KR has, so a code goes as an SMS, not an LMS, unless the academy's name needs more.
// Each purpose names itself, so a user who asked for nothing can tell what someone tried.
const LABELS: Record<OneTimeCodePurpose, string> = {
  PHONE_VERIFICATION: '휴대폰 인증번호',
  PASSWORD_RESET: '비밀번호 재설정 인증번호',
  MFA_SMS: '로그인 인증번호',
}

/** The code SMS: the academy's name, what the code is for, the code, and how long it is good for (whole minutes). */
export function codeSmsText(tenantName: string, purpose: OneTimeCodePurpose, code: string, ttlSeconds: number): string {
  const minutes = Math.max(1, Math.floor(ttlSeconds / 60))
  return `[${tenantName}] ${LABELS[purpose]} ${code} (${minutes}분 안에 입력)`
}
