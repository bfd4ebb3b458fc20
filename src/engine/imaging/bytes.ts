// Byte buffers laid end to end, for the file formats we write by hand (the greyscale PNG)
// and the tests that damage files on purpose; and a byte sequence looked for at a place
// (a format's signature, a multipart delimiter).

/** The parts one after another, in a new buffer. */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** True when `bytes` holds `what` starting at `at` (false when it would run past the end). */
export function bytesAt(bytes: Uint8Array, what: ArrayLike<number>, at = 0): boolean {
  if (at + what.length > bytes.length) return false;
  for (let j = 0; j < what.length; j++) if (bytes[at + j] !== what[j]) return false;
  return true;
}
