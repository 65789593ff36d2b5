// node main.js — with CRM_BASE_URL, CRM_API_KEY (scopes leads:read, leads:write, plus the read scope of every other object you subscribe to), CRM_WEBHOOK_SECRET and PORT.
import { createClient } from '@crm/sdk';
import { createSubscriber, enrichLead } from './subscriber.js';

const { CRM_BASE_URL = 'http://127.0.0.1:3000', CRM_API_KEY, CRM_WEBHOOK_SECRET, PORT = '4000' } = process.env;
if (!CRM_API_KEY || !CRM_WEBHOOK_SECRET) {
  console.error('Set CRM_API_KEY and CRM_WEBHOOK_SECRET (and CRM_BASE_URL, PORT).');
  process.exit(1);
}

const client = createClient({ baseUrl: CRM_BASE_URL, apiKey: CRM_API_KEY, userAgent: 'webhook-subscriber-example/0.1' });
const me = await client.me.get();
const { server, events } = createSubscriber({ client, secret: CRM_WEBHOOK_SECRET.split(','), self: { keyId: me.key.id }, handle: enrichLead });
events.on('processed', ({ eventId, outcome, error }) => console.log(`${eventId}: ${outcome}${error ? ` (${error.message})` : ''}`));
events.on('rejected', (error) => console.warn(`rejected a delivery: ${error.message}`));
server.listen(Number(PORT), () => console.log(`listening on http://127.0.0.1:${PORT}/webhooks/crm as key ${me.key.id}`));
