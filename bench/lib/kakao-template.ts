/** The channel and APPROVED template the fake provider knows and the benchmark's AlimTalk notices name. */
export const BENCH_KAKAO_CHANNEL = 'bench-channel'
export const BENCH_KAKAO_TEMPLATE = 'bench-attendance'
export const BENCH_KAKAO_CONTENT = '[출결 알림] #{name} 학생이 #{time}에 #{className} 수업에 출석했습니다.'
