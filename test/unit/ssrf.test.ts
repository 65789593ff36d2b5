import type dns from 'node:dns';
import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  checkWebhookUrl,
  classifyAddress,
  createGuardedDispatcher,
  guardLookup,
  parseHostLiteral,
  type AddressClass,
} from '../../src/modules/webhooks/ssrf.js';

/** A dns.lookup stand-in answering `addresses` for every name, honouring `all` like the real one. */
function fakeLookup(addresses: string[]): typeof dns.lookup {
  const impl = (_host: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
    const entries = addresses.map((address) => ({ address, family: net.isIP(address) }));
    process.nextTick(() =>
      options.all ? callback(null, entries) : callback(null, entries[0]!.address, entries[0]!.family),
    );
  };
  return impl as unknown as typeof dns.lookup;
}

describe('classifyAddress', () => {
  const table: Array<[string, AddressClass]> = [
    // IPv4
    ['8.8.8.8', 'public'], ['1.1.1.1', 'public'], ['93.184.216.34', 'public'],
    ['127.0.0.1', 'loopback'], ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'], ['172.16.0.1', 'private'], ['172.31.255.255', 'private'], ['192.168.1.1', 'private'],
    ['172.32.0.1', 'public'],
    ['169.254.0.1', 'link-local'], ['169.254.169.254', 'metadata'], ['169.254.170.2', 'metadata'],
    ['100.64.0.1', 'cgnat'], ['100.127.255.254', 'cgnat'], ['100.100.100.200', 'metadata'], ['100.128.0.1', 'public'],
    ['0.0.0.0', 'unspecified'], ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'], ['239.255.255.250', 'multicast'],
    ['192.0.2.1', 'reserved'], ['198.51.100.7', 'reserved'], ['203.0.113.9', 'reserved'], // documentation
    ['198.18.0.1', 'reserved'], ['198.19.255.255', 'reserved'], // benchmarking
    ['192.0.0.8', 'reserved'], ['240.0.0.1', 'reserved'], ['255.255.255.255', 'reserved'],
    // IPv6
    ['2606:4700:4700::1111', 'public'], ['2a00:1450:4001:80b::200e', 'public'],
    ['::1', 'loopback'], ['::', 'unspecified'],
    ['fe80::1', 'link-local'], ['febf::1', 'link-local'],
    ['fc00::1', 'private'], ['fd12:3456::1', 'private'], ['fec0::1', 'private'],
    ['fd00:ec2::254', 'metadata'], ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'], ['2001:2::1', 'reserved'], ['3fff::1', 'reserved'], ['100::1', 'reserved'],
    ['2001::1', 'reserved'], ['4000::1', 'reserved'], ['::7f00:1', 'reserved'],
    // IPv4 inside IPv6: judged by the IPv4 address that is actually reached
    ['::ffff:127.0.0.1', 'loopback'], ['::ffff:7f00:1', 'loopback'], ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'metadata'], ['::ffff:8.8.8.8', 'public'], ['::ffff:0:7f00:1', 'loopback'],
    ['64:ff9b::7f00:1', 'loopback'], ['64:ff9b::127.0.0.1', 'loopback'], ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['64:ff9b::808:808', 'public'], ['64:ff9b:1::1', 'private'],
    ['2002:7f00:1::', 'loopback'], ['2002:c0a8:101::1', 'private'], ['2002:808:808::1', 'public'],
  ];

  it.each(table)('%s is %s', (ip, expected) => {
    expect(classifyAddress(ip)).toBe(expected);
  });

  it('accepts the odd IPv4 notations too', () => {
    expect(classifyAddress('0x7f.1')).toBe('loopback');
    expect(classifyAddress('2852039166')).toBe('metadata'); // 169.254.169.254
  });

  it('throws on something that is not an address', () => {
    expect(() => classifyAddress('example.com')).toThrow(TypeError);
    expect(() => classifyAddress('')).toThrow(TypeError);
  });
});

describe('parseHostLiteral', () => {
  const ipv4Notations: Array<[string, string]> = [
    ['127.0.0.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'], // decimal integer
    ['0x7f000001', '127.0.0.1'], // hex integer
    ['0X7F000001', '127.0.0.1'],
    ['017700000001', '127.0.0.1'], // octal integer
    ['0177.0.0.1', '127.0.0.1'], // octal part
    ['0x7f.0x0.0x0.0x1', '127.0.0.1'], // hex parts
    ['127.1', '127.0.0.1'], // a.b
    ['127.0.1', '127.0.0.1'], // a.b.c
    ['0x7f.1', '127.0.0.1'], // mixed
    ['0177.0x0.1', '127.0.0.1'],
    ['127.0.0.1.', '127.0.0.1'], // trailing dot
    ['%31%32%37.0.0.1', '127.0.0.1'], // percent-encoded
    ['１２７．０．０．１', '127.0.0.1'], // full-width, folded by IDNA
    ['0', '0.0.0.0'],
    ['2852039166', '169.254.169.254'],
  ];

  it.each(ipv4Notations)('%s → %s, as the WHATWG URL parser normalises it', (host, canonical) => {
    expect(parseHostLiteral(host)).toBe(canonical);
    // We rely on new URL() for these; prove it agrees, so a request to the URL goes where we think.
    expect(new URL(`http://${host}/`).hostname).toBe(canonical);
  });

  const ipv6Notations: Array<[string, string]> = [
    ['[::1]', '::1'],
    ['::1', '::1'], // bare, which new URL() cannot take
    ['[0:0:0:0:0:0:0:1]', '::1'],
    ['[::ffff:127.0.0.1]', '::ffff:7f00:1'],
    ['[::FFFF:7F00:1]', '::ffff:7f00:1'],
    ['[fe80::1%25eth0]', 'fe80::1'], // zone id, which new URL() rejects
    ['fe80::1%eth0', 'fe80::1'],
    ['[64:ff9b::127.0.0.1]', '64:ff9b::7f00:1'],
  ];

  it.each(ipv6Notations)('%s → %s', (host, canonical) => {
    expect(parseHostLiteral(host)).toBe(canonical);
  });

  it.each(['example.com', 'localhost', '127.0.0.1.nip.io', '4294967296', '1.2.3.256', '1.2.3.4.5', '127.0.0.1:80', 'a@127.0.0.1', '[::1', ':::', '[]', ''])(
    '%s is not a literal',
    (host) => {
      expect(parseHostLiteral(host)).toBeNull();
    },
  );
});

describe('checkWebhookUrl', () => {
  const strict = (addresses: string[]) => ({ allowPrivateNetworks: false, resolve: vi.fn(async () => addresses) });

  it('accepts https to a name whose every address is public', async () => {
    const opts = strict(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']);
    await expect(checkWebhookUrl('https://hooks.example.com/crm', opts)).resolves.toEqual({ ok: true });
    expect(opts.resolve).toHaveBeenCalledWith('hooks.example.com');
  });

  it('refuses a name resolving to 127.0.0.1', async () => {
    await expect(checkWebhookUrl('https://hooks.example.com/', strict(['127.0.0.1']))).resolves.toEqual({
      ok: false,
      reason: 'host resolves to a loopback address',
    });
  });

  it('refuses a mix of public and private addresses, without echoing the internal address', async () => {
    const result = await checkWebhookUrl('https://hooks.example.com/', strict(['93.184.216.34', '10.0.0.7']));
    expect(result).toEqual({ ok: false, reason: 'host resolves to a private address' });
    expect(JSON.stringify(result)).not.toContain('10.0.0.7');
  });

  it('refuses http: unless private networks are allowed', async () => {
    const result = await checkWebhookUrl('http://hooks.example.com/', strict(['93.184.216.34']));
    expect(result).toMatchObject({ ok: false, reason: expect.stringMatching(/https/) });
  });

  it('refuses https://localhost (and *.localhost) without asking DNS', async () => {
    for (const url of ['https://localhost/', 'https://localhost.:8443/', 'https://api.localhost/']) {
      const opts = strict(['93.184.216.34']);
      await expect(checkWebhookUrl(url, opts)).resolves.toMatchObject({ ok: false, reason: expect.stringMatching(/loopback/) });
      expect(opts.resolve).not.toHaveBeenCalled();
    }
  });

  it.each([
    ['https://2130706433/', 'loopback'],
    ['https://0x7f.1/', 'loopback'],
    ['https://[::1]/', 'loopback'],
    ['https://[::ffff:127.0.0.1]/', 'loopback'],
    ['https://169.254.169.254/latest/meta-data/', 'metadata'],
    ['https://[fd00:ec2::254]/', 'metadata'],
    ['https://10.1.2.3/', 'private'],
    ['https://100.64.1.1/', 'cgnat'],
    ['https://[fe80::1]/', 'link-local'],
    ['https://0.0.0.0/', 'unspecified'],
  ])('refuses the IP literal %s (%s) without resolving', async (url, addressClass) => {
    const opts = strict(['93.184.216.34']);
    await expect(checkWebhookUrl(url, opts)).resolves.toEqual({ ok: false, reason: `host resolves to a ${addressClass} address` });
    expect(opts.resolve).not.toHaveBeenCalled();
  });

  it('accepts a public IP literal', async () => {
    await expect(checkWebhookUrl('https://93.184.216.34/hook', strict([]))).resolves.toEqual({ ok: true });
  });

  it('refuses unparsable URLs, userinfo, other schemes, and names that do not resolve', async () => {
    const failing = { allowPrivateNetworks: false, resolve: async () => Promise.reject(new Error('ENOTFOUND')) };
    expect((await checkWebhookUrl('not a url', strict([]))).ok).toBe(false);
    expect((await checkWebhookUrl('https://user:pw@hooks.example.com/', strict(['93.184.216.34']))).ok).toBe(false);
    // Named as people write them, not as URL.protocol spells them ("must be https:").
    expect(await checkWebhookUrl('http://hooks.example.com/', strict(['93.184.216.34']))).toEqual({ ok: false, reason: 'URL must use https' });
    expect(await checkWebhookUrl('ftp://hooks.example.com/', strict(['93.184.216.34']))).toEqual({ ok: false, reason: 'URL must use https' });
    expect(await checkWebhookUrl('https://nowhere.example/', failing)).toMatchObject({ ok: false, reason: expect.stringMatching(/resolved/) });
    expect(await checkWebhookUrl('https://nowhere.example/', strict([]))).toMatchObject({ ok: false });
  });

  it('with allowPrivateNetworks permits http: and private targets but still refuses userinfo and other schemes', async () => {
    const dev = { allowPrivateNetworks: true, resolve: vi.fn(async () => ['127.0.0.1']) };
    await expect(checkWebhookUrl('http://127.0.0.1:3000/hook', dev)).resolves.toEqual({ ok: true });
    await expect(checkWebhookUrl('http://localhost:3000/hook', dev)).resolves.toEqual({ ok: true });
    await expect(checkWebhookUrl('https://10.0.0.5/hook', dev)).resolves.toEqual({ ok: true });
    expect((await checkWebhookUrl('http://u:p@localhost:3000/', dev)).ok).toBe(false);
    expect(await checkWebhookUrl('file:///etc/passwd', dev)).toEqual({ ok: false, reason: 'URL must use https or http' });
  });
});

describe('guardLookup', () => {
  const run = (lookup: ReturnType<typeof guardLookup>, all: boolean) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number | undefined }>((resolve) => {
      lookup('hooks.example.com', { all }, (err, address, family) => resolve({ err, address, family }));
    });

  it('passes public answers through in the shape the caller asked for', async () => {
    const lookup = guardLookup(fakeLookup(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']));
    expect(await run(lookup, false)).toEqual({ err: null, address: '93.184.216.34', family: 4 });
    const all = await run(lookup, true);
    expect(all.err).toBeNull();
    expect(all.address).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ]);
  });

  it('fails with ESSRF when any answer is internal, even if the first one is public', async () => {
    const { err } = await run(guardLookup(fakeLookup(['93.184.216.34', '169.254.169.254'])), false);
    expect(err).toMatchObject({ code: 'ESSRF', addressClass: 'metadata' });
    expect(err!.message).toMatch(/metadata/);
    expect(err!.message).not.toContain('169.254.169.254');
  });

  it('propagates resolver errors unchanged', async () => {
    const failing = ((_h: string, _o: unknown, cb: (err: Error) => void) => cb(Object.assign(new Error('nope'), { code: 'ENOTFOUND' }))) as unknown as typeof dns.lookup;
    expect((await run(guardLookup(failing), false)).err).toMatchObject({ code: 'ENOTFOUND' });
  });
});

describe('createGuardedDispatcher (real connections)', () => {
  let server: Server;
  let port: number;
  let hits = 0;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      hits += 1;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('refuses at connect time when the name resolves to 127.0.0.1 (DNS rebinding)', async () => {
    // Registration saw a public address…
    const registered = await checkWebhookUrl('https://localtest.invalid/', { allowPrivateNetworks: false, resolve: async () => ['93.184.216.34'] });
    expect(registered.ok).toBe(true);
    // …but at delivery time the name points inside.
    const dispatcher = createGuardedDispatcher({ allowPrivateNetworks: false, lookup: fakeLookup(['127.0.0.1']) });
    const before = hits;
    await expect(request(`http://localtest.invalid:${port}/`, { dispatcher })).rejects.toMatchObject({ code: 'ESSRF', addressClass: 'loopback' });
    expect(hits).toBe(before);
    await dispatcher.close();
  });

  it('refuses when one of several resolved addresses is internal', async () => {
    const dispatcher = createGuardedDispatcher({ allowPrivateNetworks: false, lookup: fakeLookup(['93.184.216.34', '127.0.0.1']) });
    await expect(request(`http://localtest.invalid:${port}/`, { dispatcher })).rejects.toMatchObject({ code: 'ESSRF' });
    await dispatcher.close();
  });

  it.each(['127.0.0.1', '[::1]', '[::ffff:127.0.0.1]', '0x7f.1', '2130706433'])(
    'refuses the IP literal %s, which never goes through lookup',
    async (host) => {
      const lookup = vi.fn(fakeLookup(['93.184.216.34']) as (...args: unknown[]) => void);
      const dispatcher = createGuardedDispatcher({ allowPrivateNetworks: false, lookup: lookup as unknown as typeof dns.lookup });
      const before = hits;
      await expect(request(`http://${host}:${port}/`, { dispatcher })).rejects.toMatchObject({ code: 'ESSRF', addressClass: 'loopback' });
      expect(hits).toBe(before);
      expect(lookup).not.toHaveBeenCalled();
      await dispatcher.close();
    },
  );

  it('with allowPrivateNetworks is an ordinary Agent: the literal 127.0.0.1 succeeds', async () => {
    const dispatcher = createGuardedDispatcher({ allowPrivateNetworks: true });
    const response = await request(`http://127.0.0.1:${port}/`, { dispatcher });
    expect(response.statusCode).toBe(200);
    expect(await response.body.text()).toBe('ok');
    await dispatcher.close();
  });

  it('with allowPrivateNetworks still uses an injected lookup for names', async () => {
    const dispatcher = createGuardedDispatcher({ allowPrivateNetworks: true, lookup: fakeLookup(['127.0.0.1']) });
    const response = await request(`http://localtest.invalid:${port}/`, { dispatcher });
    expect(response.statusCode).toBe(200);
    await response.body.dump();
    await dispatcher.close();
  });
});
