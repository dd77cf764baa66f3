// A minimal WASI (preview 1) for the core module. Bun's node:wasi has no initialize() for
// reactors and writes short poll_oneoff events, so we carry our own: the standard-Go module imports
// these sixteen functions and uses only clocks, random bytes, stdout/stderr and poll_oneoff (for
// its scheduler's sleeps, which must report success). There is no file system and no argv/env.

const ESUCCESS = 0;
const EBADF = 8;
const ENOSYS = 52;

/** Thrown by proc_exit: the guest asked to stop. */
export class WasiExit extends Error {
  constructor(readonly code: number) {
    super(`wasm module exited with code ${code}`);
  }
}

export interface WasiOptions {
  /** Where the guest's stdout/stderr lines go; they carry Go runtime crash reports. */
  write?: (fd: number, text: string) => void;
}

export function makeWasi(getMemory: () => WebAssembly.Memory, opts: WasiOptions = {}) {
  const decoder = new TextDecoder();
  const view = () => new DataView(getMemory().buffer);
  const bytes = () => new Uint8Array(getMemory().buffer);
  const write = opts.write ?? ((fd: number, text: string) => (fd === 2 ? console.error(text) : console.log(text)));
  const start = performance.now();

  const now = (clockId: number): bigint => {
    if (clockId === 0) return BigInt(Date.now()) * 1_000_000n; // realtime
    return BigInt(Math.round((performance.now() - start) * 1e6)); // monotonic, process and thread clocks
  };

  const fns: Record<string, (...args: any[]) => number> = {
    args_sizes_get(argc: number, argvBufSize: number) {
      view().setUint32(argc, 0, true);
      view().setUint32(argvBufSize, 0, true);
      return ESUCCESS;
    },
    args_get() {
      return ESUCCESS;
    },
    environ_sizes_get(count: number, bufSize: number) {
      view().setUint32(count, 0, true);
      view().setUint32(bufSize, 0, true);
      return ESUCCESS;
    },
    environ_get() {
      return ESUCCESS;
    },
    clock_time_get(clockId: number, _precision: bigint, out: number) {
      view().setBigUint64(out, now(clockId), true);
      return ESUCCESS;
    },
    random_get(buf: number, len: number) {
      // getRandomValues takes at most 65536 bytes at a time.
      for (let off = 0; off < len; off += 65536) {
        crypto.getRandomValues(bytes().subarray(buf + off, buf + Math.min(len, off + 65536)));
      }
      return ESUCCESS;
    },
    fd_write(fd: number, iovs: number, iovsLen: number, nwritten: number) {
      if (fd !== 1 && fd !== 2) return EBADF;
      const v = view();
      let text = "";
      let total = 0;
      for (let i = 0; i < iovsLen; i++) {
        const ptr = v.getUint32(iovs + i * 8, true);
        const len = v.getUint32(iovs + i * 8 + 4, true);
        text += decoder.decode(bytes().subarray(ptr, ptr + len));
        total += len;
      }
      v.setUint32(nwritten, total, true);
      if (text.trim() !== "") write(fd, text.replace(/\n$/, ""));
      return ESUCCESS;
    },
    // Each subscription is answered at once as fired: the guest only ever waits on clocks, and a
    // reactor must not block its host's event loop.
    poll_oneoff(inPtr: number, outPtr: number, nsubs: number, neventsPtr: number) {
      const v = view();
      for (let i = 0; i < nsubs; i++) {
        const sub = inPtr + i * 48;
        const ev = outPtr + i * 32;
        v.setBigUint64(ev, v.getBigUint64(sub, true), true); // userdata
        v.setUint16(ev + 8, ESUCCESS, true); // error
        v.setUint8(ev + 10, v.getUint8(sub + 8)); // type = the subscription's tag
        v.setBigUint64(ev + 16, 0n, true);
        v.setUint16(ev + 24, 0, true);
      }
      v.setUint32(neventsPtr, nsubs, true);
      return ESUCCESS;
    },
    sched_yield() {
      return ESUCCESS;
    },
    proc_exit(code: number): never {
      throw new WasiExit(code);
    },
    fd_close() {
      return ESUCCESS;
    },
    fd_fdstat_get(fd: number, out: number) {
      if (fd > 2) return EBADF;
      const v = view();
      v.setUint8(out, 2); // character device
      v.setUint16(out + 2, 0, true);
      v.setBigUint64(out + 8, 0n, true);
      v.setBigUint64(out + 16, 0n, true);
      return ESUCCESS;
    },
    fd_fdstat_set_flags() {
      return ESUCCESS;
    },
    fd_prestat_get() {
      return EBADF; // no preopened directories
    },
    fd_prestat_dir_name() {
      return EBADF;
    },
  };
  // Anything else a later Go version might import links, and fails politely when called.
  return new Proxy(fns, { get: (t, name: string) => t[name] ?? (() => ENOSYS) });
}
