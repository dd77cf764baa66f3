// The shared answer slot between the Worker and OpenCode's thread: an answer written is read by
// its call alone; "none yet", a late answer to an earlier call and silence all fall back to the
// message path (undefined).
import { expect, test } from "bun:test";
import { newSlot, slotMark, waitSlot, writeSlot, SLOT_BYTES } from "./answer_slot";

test("an answer written for a call is read by that call", () => {
  const slot = newSlot();
  const mark = slotMark(slot);
  writeSlot(slot, 7, { answer: { output: "task_id: bg_1 ✓", metadata: { taskId: "bg_1" } } });
  expect(waitSlot(slot, 7, mark)).toEqual({ answer: { output: "task_id: bg_1 ✓", metadata: { taskId: "bg_1" } } });
  writeSlot(slot, 8, { error: "asyncagents_task: argument prompt is missing" });
  expect(waitSlot(slot, 8, 7)).toEqual({ error: "asyncagents_task: argument prompt is missing" });
});

test("none yet, too big, another call's answer, or silence: the answer comes by message", () => {
  const slot = newSlot();
  writeSlot(slot, 1, undefined);
  expect(waitSlot(slot, 1, 0)).toBeUndefined();
  writeSlot(slot, 2, { answer: { output: "x".repeat(SLOT_BYTES) } });
  expect(waitSlot(slot, 2, 1)).toBeUndefined();
  writeSlot(slot, 3, { answer: { output: "late, for call 3" } });
  // Call 4's answer never comes: the wait is bounded (it returns; the test's timeout catches a
  // wait that does not).
  expect(waitSlot(slot, 4, 2)).toBeUndefined();
});

test("across threads: the Worker's answer wakes the waiting thread", async () => {
  const slot = newSlot();
  const worker = new Worker(
    URL.createObjectURL(
      new Blob([`import { writeSlot } from ${JSON.stringify(new URL("./answer_slot.ts", import.meta.url).href)};
        self.onmessage = (e) => writeSlot(e.data.slot, e.data.id, { answer: { output: "from the worker " + e.data.id } });`]),
    ),
  );
  try {
    for (let id = 1; id <= 20; id++) {
      const mark = slotMark(slot);
      worker.postMessage({ slot, id });
      let got = waitSlot(slot, id, mark);
      for (let i = 0; i < 20 && !got; i++) { // the first may find the Worker still starting
        await Bun.sleep(50);
        got = waitSlot(slot, id, slotMark(slot) === id ? mark : slotMark(slot));
      }
      expect(got).toEqual({ answer: { output: `from the worker ${id}` } });
    }
  } finally {
    worker.terminate();
  }
});
