// The conformance kit's subset matcher, the same rules as core/conformance.Match in Go:
// objects key by key (extra keys fine), arrays element by element with equal length, scalars
// equal; {"$contains": s} for a string holding s, {"$absent": true} for a missing key.
export function match(want: unknown, got: unknown, where = "response"): string | null {
  if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length) {
      return `${where}: want ${want.length}-element array, got ${JSON.stringify(got)}`;
    }
    for (let i = 0; i < want.length; i++) {
      const err = match(want[i], got[i], `${where}[${i}]`);
      if (err) return err;
    }
    return null;
  }
  if (want !== null && typeof want === "object") {
    const w = want as Record<string, unknown>;
    if ("$contains" in w) {
      return typeof got === "string" && got.includes(w.$contains as string)
        ? null
        : `${where}: want a string containing ${JSON.stringify(w.$contains)}, got ${JSON.stringify(got)}`;
    }
    if (got === null || typeof got !== "object" || Array.isArray(got)) {
      return `${where}: want an object, got ${JSON.stringify(got)}`;
    }
    const g = got as Record<string, unknown>;
    for (const key of Object.keys(w).sort()) {
      const v = w[key] as Record<string, unknown> | undefined;
      if (v && typeof v === "object" && !Array.isArray(v) && v.$absent === true) {
        if (key in g) return `${where}.${key}: want absent, got ${JSON.stringify(g[key])}`;
        continue;
      }
      if (!(key in g)) return `${where}.${key}: missing (want ${JSON.stringify(v)})`;
      const err = match(v, g[key], `${where}.${key}`);
      if (err) return err;
    }
    return null;
  }
  return want === got ? null : `${where}: want ${JSON.stringify(want)}, got ${JSON.stringify(got)}`;
}
