// core/forkctx/tokens_test.go checks the Go core's EstimateTokens against real BPE token counts
// stored in core/forkctx/testdata/tokens/reference.json. This test recomputes those counts with
// gpt-tokenizer (the pinned devDependency) so that the reference cannot drift from the corpus or
// the tokenizer.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import {
  computeReference,
  formatReference,
  referencePath,
} from "../core/forkctx/testdata/tokens/reference";

test(
  "core/forkctx/testdata/tokens/reference.json matches gpt-tokenizer's counts of the corpus",
  () => {
    const live = computeReference();
    expect(Object.keys(live).length).toBeGreaterThanOrEqual(5);
    // If this fails: node_modules/.bin/bun core/forkctx/testdata/tokens/reference.ts
    expect(readFileSync(referencePath, "utf8")).toBe(formatReference(live));
  },
  60_000,
);
