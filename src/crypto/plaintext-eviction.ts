import { BroadcastChannel } from 'node:worker_threads';
import type { FieldCipher } from './field-cipher.js';

/*
 * Each thread of a server keeps its own cache of decrypted contact values (field-cipher.ts). After an erasure
 * the thread that erased drops its cache and tells the others, through a channel every thread of the process
 * listens to, to drop theirs. Other processes (workers, other instances) never serve an erased value from
 * their caches either — the ciphertexts that would hit them are gone — and their entries age out
 * (docs/privacy.md).
 */
const CHANNEL = 'crm:forget-plaintexts';
const listening = new WeakMap<FieldCipher, BroadcastChannel>();

/** `cipher` drops its cached plaintexts whenever another thread of this process erases. */
export function forgetOnBroadcast(cipher: FieldCipher): void {
  const channel = new BroadcastChannel(CHANNEL);
  channel.onmessage = () => cipher.forgetCached();
  // Listening must not keep a process alive on its own.
  channel.unref();
  listening.set(cipher, channel);
}

export function stopForgetting(cipher: FieldCipher): void {
  listening.get(cipher)?.close();
  listening.delete(cipher);
}

/** Drops the cached plaintexts of this thread and of every other thread of the process. */
export function forgetEverywhere(cipher: FieldCipher): void {
  cipher.forgetCached();
  const channel = new BroadcastChannel(CHANNEL);
  channel.postMessage('forget');
  channel.close();
}
