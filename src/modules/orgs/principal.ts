export const SCOPES = [
  'leads:read',
  'leads:write',
  'accounts:read',
  'accounts:write',
  'deals:read',
  'deals:write',
  'records:read',
  'records:write',
  'objects:admin',
  'notes:read',
  'notes:write',
  'tasks:read',
  'tasks:write',
  'webhooks:read',
  'webhooks:write',
  // The organization's users (GET /users), to choose and show owners.
  'users:read',
  // Erasure and subject export (docs/privacy.md): granted only by name, never implied by another scope.
  'privacy:read',
  'privacy:write',
] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** Who made a change, as carried by every event (contract §5). */
export interface Actor {
  type: 'API_KEY' | 'USER' | 'SYSTEM';
  id: string;
  channel: 'API' | 'UI' | 'MCP' | 'COPILOT';
}

/** The authenticated caller of an API request. */
export interface Principal {
  organization: { id: string; name: string; timezone: string };
  key: {
    id: string;
    name: string;
    prefix: string;
    scopes: Scope[];
    expiresAt: string | null;
    rateLimitPerMinute: number | null;
  };
  user: { id: string; name: string } | null;
  actor: Actor;
}
