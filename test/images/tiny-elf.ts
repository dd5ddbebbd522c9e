/**
 * A static Linux program of a few hundred bytes that writes a fixed text to stdout and exits
 * 0, for amd64 or arm64: an ELF header, one loadable segment, the machine code of two system
 * calls (write, exit) and the text. It lets an image test put a runnable program into an
 * image of another architecture without a compiler or a base image for it; run there, it goes
 * through qemu-user like any other foreign binary.
 */

const BASE = 0x400000;
const HEADERS = 64 + 56;

/** write(1, text, length); exit(0) in x86-64: the text follows the code. */
function amd64Code(length: number): Buffer {
  const code = Buffer.from([
    0xb8, 0x01, 0x00, 0x00, 0x00, // mov eax, 1 (write)
    0xbf, 0x01, 0x00, 0x00, 0x00, // mov edi, 1 (stdout)
    0x48, 0x8d, 0x35, 0x00, 0x00, 0x00, 0x00, // lea rsi, [rip + rel32] (the text)
    0xba, 0x00, 0x00, 0x00, 0x00, // mov edx, length
    0x0f, 0x05, // syscall
    0xb8, 0x3c, 0x00, 0x00, 0x00, // mov eax, 60 (exit)
    0x31, 0xff, // xor edi, edi
    0x0f, 0x05, // syscall
  ]);
  code.writeInt32LE(code.length - 17, 13); // from the end of the lea (byte 17) to the text
  code.writeUInt32LE(length, 18);
  return code;
}

/** The same in AArch64 (A64): x0-x2 the arguments, x8 the system call number. */
function arm64Code(length: number): Buffer {
  const movz = (register: number, value: number): number => (0xd2800000 | (value << 5) | register) >>> 0;
  const svc0 = 0xd4000001;
  // adr x1, text: the text is 28 bytes after this instruction (immhi = 28 >> 2, immlo = 0).
  const adrX1 = (0x10000000 | ((28 >> 2) << 5) | 1) >>> 0;
  const words = [movz(0, 1), adrX1, movz(2, length), movz(8, 64), svc0, movz(0, 0), movz(8, 93), svc0];
  const code = Buffer.alloc(words.length * 4);
  words.forEach((word, i) => code.writeUInt32LE(word, i * 4));
  return code;
}

const MACHINES = { amd64: { machine: 62, code: amd64Code }, arm64: { machine: 183, code: arm64Code } } as const;

export type TinyElfArch = keyof typeof MACHINES;

/** The program for `arch` that prints `text` (at most 4095 bytes). */
export function tinyElf(arch: TinyElfArch, text: string): Buffer {
  const { machine, code: codeOf } = MACHINES[arch];
  const message = Buffer.from(text);
  if (message.length > 4095) throw new Error('tinyElf: the text is longer than 4095 bytes');
  const code = codeOf(message.length);
  const size = HEADERS + code.length + message.length;
  const elf = Buffer.alloc(size);
  // ELF header: 64-bit, little-endian, version 1, an executable for `machine`.
  Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]).copy(elf, 0);
  elf.writeUInt16LE(2, 16);
  elf.writeUInt16LE(machine, 18);
  elf.writeUInt32LE(1, 20);
  elf.writeBigUInt64LE(BigInt(BASE + HEADERS), 24); // entry: the code, after the headers
  elf.writeBigUInt64LE(64n, 32); // program headers right after this header
  elf.writeUInt16LE(64, 52);
  elf.writeUInt16LE(56, 54);
  elf.writeUInt16LE(1, 56);
  // One PT_LOAD segment, read + execute: the whole file at BASE.
  elf.writeUInt32LE(1, 64);
  elf.writeUInt32LE(5, 68);
  elf.writeBigUInt64LE(BigInt(BASE), 80);
  elf.writeBigUInt64LE(BigInt(BASE), 88);
  elf.writeBigUInt64LE(BigInt(size), 96);
  elf.writeBigUInt64LE(BigInt(size), 104);
  elf.writeBigUInt64LE(0x1000n, 112);
  code.copy(elf, HEADERS);
  message.copy(elf, HEADERS + code.length);
  return elf;
}
