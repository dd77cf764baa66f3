// A tool call's answer, handed from the Worker to OpenCode's thread without waiting for that
// thread's event loop. OpenCode runs a turn's tool calls one after another on its thread, and a
// message from the Worker is only read once the thread is free: with many launches in one turn,
// each answer would wait for every later call of the turn to start, though the core answered at
// once. So OpenCode's thread posts the call as usual, then waits, for a bounded time, on a shared
// slot the Worker writes the answer into (Atomics), which needs no event loop. An answer that is not there in time (the Worker is busy, or the call waits,
// like asyncagents_output with block) comes by message as before.
//
// Layout (Int32 words, then bytes): [0] the call ID written last, [1] the answer's length in bytes,
// or NOT_NOW / TOO_BIG; the answer's JSON from byte 8.

import type { ToolAnswer } from "./runtime";

/** Bytes of the slot: answers larger than this go by message. */
export const SLOT_BYTES = 256 * 1024;
/** How long OpenCode's thread waits for an answer, at most. */
export const SLOT_WAIT_MS = 50;

const NOT_NOW = -1; // the call has no answer yet (it waits on something)
const TOO_BIG = -2;

export type SlotAnswer = { answer?: ToolAnswer; error?: string };

export function newSlot(): SharedArrayBuffer {
  return new SharedArrayBuffer(8 + SLOT_BYTES);
}

/** The Worker's side: writes the answer (or that there is none yet) to call id, and wakes the waiter. */
export function writeSlot(sab: SharedArrayBuffer, id: number, answer: SlotAnswer | undefined): void {
  const words = new Int32Array(sab, 0, 2);
  let len = NOT_NOW;
  if (answer) {
    const bytes = new TextEncoder().encode(JSON.stringify(answer));
    if (bytes.length > SLOT_BYTES) len = TOO_BIG;
    else {
      new Uint8Array(sab, 8, bytes.length).set(bytes);
      len = bytes.length;
    }
  }
  Atomics.store(words, 1, len);
  Atomics.store(words, 0, id);
  Atomics.notify(words, 0);
}

/** OpenCode's thread: the last call ID written, to wait past. */
export function slotMark(sab: SharedArrayBuffer): number {
  return Atomics.load(new Int32Array(sab, 0, 2), 0);
}

/**
 * OpenCode's thread: waits (blocking, at most SLOT_WAIT_MS) until the slot holds call id's
 * answer, having read mark before posting the call. Undefined when it is not there in time, or
 * there is none yet: the answer then comes by message.
 */
export function waitSlot(sab: SharedArrayBuffer, id: number, mark: number): SlotAnswer | undefined {
  const words = new Int32Array(sab, 0, 2);
  const deadline = performance.now() + SLOT_WAIT_MS;
  let seen = mark;
  for (;;) {
    const now = Atomics.load(words, 0);
    if (now === id) break;
    const left = deadline - performance.now();
    if (left <= 0) return undefined;
    if (now !== seen) seen = now; // a late answer to an earlier call: wait past it
    Atomics.wait(words, 0, seen, left);
  }
  const len = Atomics.load(words, 1);
  if (len < 0) return undefined;
  const text = new TextDecoder().decode(new Uint8Array(sab, 8, len).slice());
  // A later write may have begun meanwhile (only after a wait that gave up): then trust the message.
  if (Atomics.load(words, 0) !== id) return undefined;
  return JSON.parse(text) as SlotAnswer;
}
