/** A scripted fetch: answers (or throws) in order and records every request it saw. */
export interface Seen {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
  at: number;
}

type Answer = { status: number; body?: unknown; headers?: Record<string, string> } | Error;

export function scriptedFetch(answers: Answer[]) {
  const seen: Seen[] = [];
  const fetch = async (url: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    seen.push({
      url: String(url),
      method: String(init.method),
      headers: Object.fromEntries(Object.entries((init.headers ?? {}) as Record<string, string>)),
      body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
      at: Date.now(),
    });
    const answer = answers.shift();
    if (answer === undefined) throw new Error('scriptedFetch: no answer left');
    if (answer instanceof Error) throw answer;
    const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? {});
    return new Response(answer.status === 204 ? null : text, { status: answer.status, headers: { 'content-type': 'application/json', ...answer.headers } });
  };
  return { fetch: fetch as typeof globalThis.fetch, seen };
}

export const ok = (data: unknown, status = 200) => ({ status, body: { status: true, code: 'SUCCESS', data } });

export const apiError = (status: number, code: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) => ({
  status,
  body: { status: false, code, message: `${code} happened`, requestId: 'req-1', ...extra },
  headers,
});

export const lead = (id: string) => ({ id, name: `Lead ${id}` });
export const page = (ids: string[], p: number, nextCursor: string | null) =>
  ok({ leads: ids.map(lead), pagination: { page: p, limit: ids.length, total: 99, totalPages: nextCursor ? p + 1 : p, hasMore: nextCursor !== null, nextCursor } });
