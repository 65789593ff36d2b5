import { randomBytes, createHmac } from 'node:crypto';
const which = process.argv[2];
const nums = Array.from({ length: 100000 }, (_, i) => `+1415${5000000 + i}`);
const { normalizePhone } = await import('./dist/src/lib/contact.js');
const { createFieldCipher } = await import('./dist/src/crypto/field-cipher.js');
const { createBlindIndex } = await import('./dist/src/crypto/blind-index.js');
const { validateValue } = await import('./dist/src/http/validation.js');
const { CreateLeadBody } = await import('./dist/src/modules/leads/leads.schemas.js');
const cipher = createFieldCipher([randomBytes(32).toString('base64')]);
const bidx = createBlindIndex(randomBytes(32));
const schema = JSON.parse(JSON.stringify(CreateLeadBody));
const t = performance.now();
if (which === 'phone') for (const n of nums) normalizePhone(n);
if (which === 'aes') for (const n of nums) { cipher.encrypt(n, 'leads:6b055725eaff37d94c1bbefb:phone'); cipher.encrypt(n + '@example.com', 'leads:6b055725eaff37d94c1bbefb:email'); }
if (which === 'hmac') for (const n of nums) { bidx.compute('phone', '6b055725eaff37d94c1bbefb', n); bidx.compute('email', '6b055725eaff37d94c1bbefb', n + '@x.com'); }
if (which === 'ajv') for (const n of nums) validateValue(schema, { name: 'Ada Lovelace X.', email: `p${n}@example.com`, phoneNumber: n, source: 'WEBSITE', sourceCampaign: 'spring', company: 'Acme, Inc.' }, 'row');
console.error(which, ((performance.now() - t) * 10).toFixed(2), 'µs/row');
