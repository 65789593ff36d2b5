import type { Worker } from 'node:worker_threads';
import { startWorker } from '../lib/worker-thread.js';
import type { SealedContacts } from './contact-fields.js';
import type { SealReply, SealRequest, SealWorkerData } from './contact-seal-worker.js';

interface Pending {
  resolve(sealed: (string | null)[]): void;
  reject(err: Error): void;
}

/** A row whose contacts are to be sealed: its id (bound into each ciphertext) and its normalized contacts. */
export interface RowContacts {
  rowId: string;
  email: string | null;
  phoneNumber: string | null;
}

/**
 * Contact fields sealed on a worker thread (contact-seal-worker.ts), for the new leads of a batch: AES-GCM and
 * HMAC per value are most of what preparing a new lead costs (a native cipher object per value), and on the
 * worker they no longer hold the thread that serves requests, as `crm import` seals one chunk on its worker
 * while storing the last. The worker starts on first use and stops with the app; one that fails rejects what
 * it had pending (the caller then seals those rows itself) and is started afresh on the next use.
 */
export class ContactSealThread {
  private worker: Promise<Worker> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  /** `keys`: what the worker seals with, asked for when it starts. */
  constructor(private readonly keys: () => Promise<SealWorkerData['keys']>) {}

  /** Per row, its sealed contacts, as sealContacts(crypto, { table, rowId, organizationId }, contacts) gives. */
  async seal(table: string, organizationId: string, rows: readonly RowContacts[]): Promise<SealedContacts[]> {
    const worker = await this.started();
    const id = this.nextId++;
    const values = rows.flatMap((r) => [r.rowId, r.email, r.phoneNumber]);
    const sealed = await new Promise<(string | null)[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      const request: SealRequest = { id, table, organizationId, values };
      worker.postMessage(request);
    });
    return rows.map((_, i) => ({ emailEnc: sealed[4 * i]!, emailBidx: sealed[4 * i + 1]!, phoneEnc: sealed[4 * i + 2]!, phoneBidx: sealed[4 * i + 3]! }));
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await (await worker.catch(() => undefined))?.terminate();
  }

  private started(): Promise<Worker> {
    this.worker ??= this.keys().then((keys) => {
      const data: SealWorkerData = { keys };
      const worker = startWorker(import.meta.url, 'contact-seal-worker', data);
      // Requests in flight keep the process busy anyway; an idle worker must not keep it alive.
      worker.unref();
      worker.on('message', (reply: SealReply) => this.settle(reply));
      worker.on('error', (err) => this.lost(worker, err));
      worker.on('exit', (code) => this.lost(worker, new Error(`the contact sealing worker stopped (exit code ${code})`)));
      return worker;
    });
    return this.worker;
  }

  private settle(reply: SealReply): void {
    const pending = this.pending.get(reply.id);
    this.pending.delete(reply.id);
    if ('failure' in reply) pending?.reject(new Error(reply.failure));
    else pending?.resolve(reply.sealed);
  }

  /** The worker is gone: what it had pending fails, and the next use starts another. */
  private lost(worker: Worker, err: Error): void {
    void this.worker?.then((current) => {
      if (current === worker) this.worker = undefined;
    });
    for (const pending of this.pending.values()) pending.reject(err);
    this.pending.clear();
  }
}
