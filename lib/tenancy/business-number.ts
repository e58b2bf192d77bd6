/**
 * Korean business registration numbers (사업자등록번호): written `123-45-67890` or as plain
 * digits, stored as the 10 digits. The last digit is a check digit over the first nine.
 */

const WEIGHTS = [1, 3, 7, 1, 3, 7, 1, 3, 5] as const

/** The 10 digits of a valid number, or null when the input is malformed or its check digit is wrong. */
export function normalizeBusinessNumber(input: string): string | null {
  const digits = input.replace(/[\s-]/g, '')
  if (!/^[0-9]{10}$/.test(digits)) return null
  return checkDigit(digits) === Number(digits[9]) ? digits : null
}

/** The check digit for the first nine digits of `digits`. */
export function checkDigit(digits: string): number {
  let sum = 0
  WEIGHTS.forEach((weight, index) => {
    sum += Number(digits[index]) * weight
  })
  // The ninth digit is weighted 5 and its product's tens digit is added once more.
  sum += Math.floor((Number(digits[8]) * 5) / 10)
  return (10 - (sum % 10)) % 10
}
