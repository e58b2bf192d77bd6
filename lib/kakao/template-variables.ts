/** A variable of a Kakao template's content: `#{name}` (docs/provider.md#kakao-reads). */
const VARIABLE = /#\{([^{}]+)\}/g

/**
 * A template's content cut once at its variables: `literals[i]`, then the value of `slots[i]`, ..., then the last
 * literal. Rendering 10,000 notices of one template is then string joins, with no pattern run per notice.
 */
export interface KakaoText {
  /** The names inside `#{...}`, each once, in order of first use. */
  readonly variables: readonly string[]
  /** The name at each `#{...}`, in order, repeats included. */
  readonly slots: readonly string[]
  /** The text around the slots: one more than `slots`. */
  readonly literals: readonly string[]
}

function cut(content: string): KakaoText {
  const slots: string[] = []
  const literals: string[] = []
  let at = 0
  for (const match of content.matchAll(VARIABLE)) {
    literals.push(content.slice(at, match.index))
    slots.push(match[1]!)
    at = match.index + match[0].length
  }
  literals.push(content.slice(at))
  return { variables: [...new Set(slots)], slots, literals }
}

// A handful of templates per academy: the hand-over meets the same contents over and over. Bounded all the same.
const CUT_CACHE_SIZE = 512
const cuts = new Map<string, KakaoText>()

/** `content` cut at its variables, remembered for the next message of the same template. */
export function kakaoText(content: string): KakaoText {
  let text = cuts.get(content)
  if (text === undefined) {
    if (cuts.size >= CUT_CACHE_SIZE) cuts.clear()
    text = cut(content)
    cuts.set(content, text)
  }
  return text
}

/** The names inside `#{...}` in `content`, each once, in order of first use. */
export function templateVariables(content: string): string[] {
  return [...kakaoText(content).variables]
}

type Values = Readonly<Record<string, string>>

/** The value of `name` in the last of `layers` that has it as its own property (a later layer wins). */
export function layeredValue(layers: readonly Values[], name: string): string | undefined {
  for (let i = layers.length - 1; i >= 0; i--) if (Object.hasOwn(layers[i]!, name)) return layers[i]![name]
  return undefined
}

/**
 * `content` with each `#{name}` replaced by its value, in one pass: a value is inserted as written and never scanned
 * again, and a name without a value stays as written. Values come in layers, a later layer winning (the request's
 * values, then the recipient's), so no merged copy is made per recipient. Acceptance sizes the text and the hand-over
 * sends it with this one function, since the provider refuses a notice whose text is not its template so filled. Own
 * values only: a variable named `constructor` has no value unless one is given.
 */
export function renderAlimtalk(content: string, ...layers: readonly Values[]): string {
  const { slots, literals } = kakaoText(content)
  let text = literals[0]!
  for (let i = 0; i < slots.length; i++) {
    const name = slots[i]!
    text += (layeredValue(layers, name) ?? `#{${name}}`) + literals[i + 1]!
  }
  return text
}
