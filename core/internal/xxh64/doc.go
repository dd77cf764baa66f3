// Package xxh64 is XXH64 (seed 0), the xxHash project's 64-bit checksum, which the task history's
// lines and its index carry. It is a leaf: it imports only the standard library.
package xxh64
