import { describe, expect, it } from 'vitest'
import { templateVariables } from '../../lib/kakao/template-variables.js'

describe('templateVariables', () => {
  it('names each #{...} once, in order of first use', () => {
    expect(templateVariables('#{name}님, #{month} 수강료 #{amount}원. #{name} 학생 #{month}')).toEqual(['name', 'month', 'amount'])
  })

  it('reads Korean names and ignores braces without the #, an empty #{} and text without variables', () => {
    expect(templateVariables('{name} #{} #{학생명}의 #{수업 이름}')).toEqual(['학생명', '수업 이름'])
    expect(templateVariables('오늘은 휴원입니다.')).toEqual([])
  })
})
