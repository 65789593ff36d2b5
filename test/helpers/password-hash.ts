import { randomBytes, scryptSync } from 'node:crypto';

/**
 * A password hash in the stored format (`scrypt$N$r$p$salt$key`) at a low scrypt cost, N=2^10 where production
 * hashes at 2^15: a sign-in verifies at the cost its stored hash names, so a test user's sign-in costs about
 * 3 ms of CPU instead of 0.1 s. Passwords set through the app are hashed at the production cost (checked by
 * test/unit/crypto.test.ts and admin-passwords.test.ts).
 */
export function cheapPasswordHash(password: string): string {
  const params = { N: 1024, r: 8, p: 1 };
  const salt = randomBytes(16);
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString('base64')}$${scryptSync(password, salt, 32, params).toString('base64')}`;
}
