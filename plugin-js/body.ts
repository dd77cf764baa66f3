/**
 * A request body read no further than a cap: one byte past it at most, so the core can still tell
 * a body that is too long, while a client that sends megabytes (before any token is checked) makes
 * the host hold no more than the cap. The Go host does the same with an io.LimitReader.
 */
export async function readCapped(req: Request, max: number): Promise<string> {
  if (!req.body) return "";
  const reader = req.body.getReader();
  const buf = new Uint8Array(max + 1);
  let n = 0;
  try {
    while (n < buf.length) {
      const { done, value } = await reader.read();
      if (done) break;
      const take = Math.min(value.byteLength, buf.length - n);
      buf.set(value.subarray(0, take), n);
      n += take;
    }
  } finally {
    if (n >= buf.length) void reader.cancel().catch(() => {});
    reader.releaseLock();
  }
  return new TextDecoder().decode(buf.subarray(0, n));
}
