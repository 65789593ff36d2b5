import { CrmApiError, CrmConnectionError } from './errors.js';
import { tagData } from './etag.js';
import { parseRetryAfter, retryDelayMs, shouldRetry, sleep, type Outcome } from './retry.js';
import type { CallOptions, CreateOptions, MethodOf, Path, Query, RequestBody, ResponseData } from './types.js';
import { SDK_VERSION } from './version.js';

export interface ClientOptions {
  /** Where the API is served, e.g. `https://crm.example.com` (a trailing `/api/public/v1` is accepted too). */
  baseUrl: string;
  /** An API key (`crm_live_…`), sent as `Authorization: Bearer`. */
  apiKey: string;
  /** A fetch implementation (tests, proxies, instrumentation); the global fetch by default. */
  fetch?: typeof fetch;
  /** Retries after a retryable failure (see retry.ts). Default 2. */
  maxRetries?: number;
  /** Appended to the User-Agent, e.g. `my-integration/1.4`. */
  userAgent?: string;
  /** Per attempt, in milliseconds. Default 30 000. */
  timeoutMs?: number;
}

export interface CallInput<P extends Path, M extends MethodOf<P>> {
  params?: Record<string, string>;
  query?: Query<P, M>;
  body?: RequestBody<P, M>;
  idempotencyKey?: string;
  /** Sent as If-None-Match: a 304 answer resolves to undefined. */
  ifNoneMatch?: string;
}

const API_PREFIX = '/api/public/v1';

/** The transport every resource uses: URL building, headers, the error envelope and retries. */
export class Core {
  readonly #baseUrl: string;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;
  readonly #maxRetries: number;
  readonly #userAgent: string;
  readonly #timeoutMs: number;

  constructor(opts: ClientOptions) {
    if (!opts.baseUrl) throw new TypeError('createClient: baseUrl is required');
    if (!opts.apiKey) throw new TypeError('createClient: apiKey is required');
    const base = opts.baseUrl.replace(/\/+$/, '');
    this.#baseUrl = base.endsWith(API_PREFIX) ? base.slice(0, -API_PREFIX.length) : base;
    this.#apiKey = opts.apiKey;
    this.#fetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
    this.#maxRetries = opts.maxRetries ?? 2;
    this.#userAgent = [`crm-sdk/${SDK_VERSION}`, opts.userAgent].filter(Boolean).join(' ');
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
  }

  /** A creating POST: sends an Idempotency-Key (random unless given), the same on every retry. */
  create<P extends Path>(path: P, body: RequestBody<P, 'post' & MethodOf<P>>, opts: CreateOptions & { params?: Record<string, string> } = {}) {
    return this.keyedPost(path, { params: opts.params, body }, opts);
  }

  /** Any POST the server makes idempotent (creates, secret rotation, test sends): retries replay instead of repeating. */
  keyedPost<P extends Path>(path: P, input: Omit<CallInput<P, 'post' & MethodOf<P>>, 'idempotencyKey'>, opts: CreateOptions = {}) {
    const idempotencyKey = opts.idempotencyKey ?? crypto.randomUUID();
    return this.call(path, 'post' as 'post' & MethodOf<P>, { ...input, idempotencyKey }, opts);
  }

  async call<P extends Path, M extends MethodOf<P>>(path: P, method: M, input: CallInput<P, M> = {}, opts: CallOptions = {}): Promise<ResponseData<P, M>> {
    const url = this.#url(path, input.params, input.query as Record<string, unknown> | undefined);
    const verb = method.toUpperCase();
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#apiKey}`,
      accept: 'application/json',
      'user-agent': this.#userAgent,
    };
    if (input.body !== undefined) headers['content-type'] = 'application/json';
    if (input.idempotencyKey !== undefined) headers['idempotency-key'] = input.idempotencyKey;
    if (opts.ifMatch !== undefined) headers['if-match'] = opts.ifMatch;
    if (input.ifNoneMatch !== undefined) headers['if-none-match'] = input.ifNoneMatch;
    const body = input.body === undefined ? undefined : JSON.stringify(input.body);
    const maxRetries = opts.maxRetries ?? this.#maxRetries;

    for (let attempt = 0; ; attempt += 1) {
      const res = await this.#send(url, { method: verb, headers, body }, opts.signal);
      if (!(res instanceof CrmConnectionError) && res.status === 304 && input.ifNoneMatch !== undefined) return undefined as ResponseData<P, M>;
      if (!(res instanceof CrmConnectionError) && res.ok) {
        const envelope = (await res.json().catch(() => null)) as { data?: ResponseData<P, M> } | null;
        // A 2xx that is not the API's envelope (a proxy's or captive portal's page) is no answer of the API.
        if (envelope === null || typeof envelope !== 'object' || !('data' in envelope)) {
          throw new CrmApiError({ status: res.status, code: 'HTTP_ERROR', message: `HTTP ${res.status}: not an answer of the API`, requestId: res.headers.get('x-request-id'), retryAfter: null });
        }
        const data = envelope.data as ResponseData<P, M>;
        tagData(data, res.headers.get('etag'));
        return data;
      }
      const failure = res instanceof CrmConnectionError ? res : await toApiError(res);
      const outcome: Outcome =
        failure instanceof CrmApiError
          ? { kind: 'status', status: failure.status, code: failure.code, retryAfterMs: failure.retryAfter === null ? null : failure.retryAfter * 1000 }
          : { kind: 'network' };
      const delay = attempt < maxRetries && shouldRetry(verb, input.idempotencyKey !== undefined, outcome)
        ? retryDelayMs(attempt, outcome.kind === 'status' ? outcome.retryAfterMs : null)
        : null;
      if (delay === null) throw failure;
      await sleep(delay, opts.signal);
    }
  }

  /** One attempt; a failure to get any answer comes back as a CrmConnectionError (the caller's own abort is thrown). */
  async #send(url: string, init: RequestInit, signal: AbortSignal | undefined): Promise<Response | CrmConnectionError> {
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    try {
      return await this.#fetch(url, { ...init, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      return new CrmConnectionError(`${String(init.method)} ${url} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  }

  #url(path: string, params: Record<string, string> = {}, query: Record<string, unknown> = {}): string {
    const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = params[name];
      if (value === undefined || value === '') throw new TypeError(`missing path parameter ${name}`);
      return encodeURIComponent(value);
    });
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined && value !== null) search.append(key, String(value));
    }
    const qs = search.toString();
    return `${this.#baseUrl}${filled}${qs ? `?${qs}` : ''}`;
  }
}

/** The API's error envelope as a CrmApiError; an answer that is not one (a proxy's HTML page) still gets status and request id. */
async function toApiError(res: Response): Promise<CrmApiError> {
  const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), Date.now());
  const retryAfter = retryAfterMs === null ? null : Math.ceil(retryAfterMs / 1000);
  const headerRequestId = res.headers.get('x-request-id');
  const envelope = (await res.json().catch(() => null)) as { code?: unknown; message?: unknown; errors?: unknown; data?: unknown; requestId?: unknown } | null;
  if (envelope && typeof envelope.code === 'string' && typeof envelope.message === 'string') {
    const data = envelope.data !== null && typeof envelope.data === 'object' ? (envelope.data as Record<string, unknown>) : null;
    tagData(data, res.headers.get('etag'));
    return new CrmApiError({
      data,
      status: res.status,
      code: envelope.code as CrmApiError['code'],
      message: envelope.message,
      errors: Array.isArray(envelope.errors) ? (envelope.errors as CrmApiError['errors']) : [],
      requestId: typeof envelope.requestId === 'string' ? envelope.requestId : headerRequestId,
      retryAfter,
    });
  }
  return new CrmApiError({ status: res.status, code: 'HTTP_ERROR', message: `HTTP ${res.status} ${res.statusText}`.trim(), requestId: headerRequestId, retryAfter });
}
