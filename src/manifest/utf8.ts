/**
 * Finding the first byte that is not valid UTF-8, so that a SKILL.md with a broken byte is
 * reported with the byte's offset instead of having it silently replaced by U+FFFD. The common
 * case (valid text) is checked by the platform's fatal `TextDecoder`; only a failure is walked
 * byte by byte to locate it.
 *
 * Pure: no I/O.
 */

/** Length of the sequence a lead byte announces, or 0 when the byte cannot lead one. */
function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/** The allowed range of the second byte after `lead` (the rest are always 0x80-0xBF). */
function secondByteRange(lead: number): [number, number] {
  if (lead === 0xe0) return [0xa0, 0xbf]; // no overlong three-byte forms
  if (lead === 0xed) return [0x80, 0x9f]; // no surrogates
  if (lead === 0xf0) return [0x90, 0xbf]; // no overlong four-byte forms
  if (lead === 0xf4) return [0x80, 0x8f]; // nothing past U+10FFFF
  return [0x80, 0xbf];
}

/**
 * The offset of the first byte of the first invalid sequence in `bytes`, or -1 when all of it is
 * valid UTF-8. With `complete: false` (a prefix of a longer file), a sequence cut off by the end
 * of `bytes` is not an error.
 */
export function invalidUtf8Offset(bytes: Uint8Array, complete = true): number {
  try {
    // A fresh decoder each time: a streaming decode leaves state behind in the decoder.
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: !complete });
    return -1;
  } catch {
    // Located below.
  }
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    const length = sequenceLength(lead);
    if (length === 0) return i;
    if (length === 1) {
      i++;
      continue;
    }
    for (let k = 1; k < length; k++) {
      if (i + k >= bytes.length) return complete ? i : -1;
      const [low, high] = k === 1 ? secondByteRange(lead) : [0x80, 0xbf];
      const byte = bytes[i + k]!;
      if (byte < low || byte > high) return i;
    }
    i += length;
  }
  return -1;
}
