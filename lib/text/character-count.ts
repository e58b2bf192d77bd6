/**
 * The characters of `text` as a person counts them and as `[...text]` would: a surrogate pair (an emoji) is one, a
 * lone surrogate one too. Without building an array, since sizing runs over every recipient of a 10,000-recipient send.
 */
export function characterCount(text: string): number {
  let count = text.length
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i)
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--
        i++
      }
    }
  }
  return count
}
