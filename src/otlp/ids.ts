import { randomBytes } from 'node:crypto';

const HEX = /^[0-9a-fA-F]*$/;

export function isHex(value: string, length: number): boolean {
  return value.length === length && HEX.test(value);
}

/** Hex of an id's bytes; an absent one (protobufjs decodes it as a plain empty array) is ''. */
export function bytesToHex(bytes: Uint8Array | readonly number[]): string {
  if (bytes.length === 0) return '';
  if (!(bytes instanceof Uint8Array)) return Buffer.from(bytes).toString('hex');
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

export function hexToBytes(hex: string): Buffer {
  return Buffer.from(hex, 'hex');
}

export function newTraceId(): string {
  return randomBytes(16).toString('hex');
}

export function newSpanId(): string {
  return randomBytes(8).toString('hex');
}
