import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import { inTransaction } from '../../db/transaction.js';
import type { Scope } from '../orgs/principal.js';
import type { Caller } from './caller.js';
import type { WriteOptions } from './precondition.js';
import { callerOf } from '../../http/auth.js';
import { ifMatchOf } from '../../http/entity-tags.js';
import { Nullable, ok, Timestamp } from '../../http/schemas.js';

/** What a resource hands over to get its DELETE and restore routes: paths, schemas and the service calls. */
export interface TrashRouteSpec<P> {
  /** The item's path, e.g. `/leads/:id`. */
  path: string;
  params: TObject;
  scope: Scope;
  tags: string[];
  /** The resource's name in prose and its key in the envelope: `lead` → `data.lead`. */
  noun: string;
  envelope: TSchema;
  remove(trx: Executor, caller: Caller, params: P, permanent: boolean, opts: WriteOptions): Promise<unknown>;
  restore(trx: Executor, caller: Caller, params: P, opts: WriteOptions): Promise<unknown>;
}

const DeleteQuery = Type.Object(
  {
    permanent: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'true removes the item for good at once (live or in the trash), with no restore, and with it its earlier events and webhook deliveries and the stored idempotent responses about it; records `<object>.purged`.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** Every trashable resource's `deletedAt`. */
export const DeletedAt = Nullable(Timestamp('When the item was deleted (it is in the trash), else null.'));

/** The list query parameter that shows the trash instead of the live items (every list takes it). */
export const TrashQuery = {
  deleted: Type.Optional(Type.Boolean({ default: false, description: 'true lists the trash instead: items deleted within the retention period, newest deletion first.' })),
};

/**
 * Registers `DELETE <path>` and `POST <path>/restore` for a resource (contract §7), both under the resource's
 * `:write` scope, each in one transaction with its event.
 */
export function registerTrashRoutes<P>(parent: FastifyInstance, ctx: AppContext, spec: TrashRouteSpec<P>): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { noun } = spec;
  const response = { 200: spec.envelope };
  const config = { auth: { anyOf: [spec.scope] }, etag: noun, ifMatch: true };
  app.delete(spec.path, {
    config,
    schema: {
      tags: spec.tags,
      summary: `Delete a ${noun}`,
      description: `Moves the ${noun} to the trash: answered with \`deletedAt\` set, then absent from reads, lists, searches and duplicate checks until restored; records \`${noun}.deleted\`. A ${noun} already in the trash is 404. With \`permanent=true\` it is removed for good at once. The trash is purged after TRASH_RETENTION_DAYS.`,
      params: spec.params,
      querystring: DeleteQuery,
      response,
    },
    handler: async (request) => {
      const caller = callerOf(request);
      const permanent = (request.query as { permanent?: boolean }).permanent === true;
      const opts = { ifMatch: ifMatchOf(request) };
      const item = await inTransaction(ctx, (trx) => spec.remove(trx, caller, request.params as P, permanent, opts));
      return ok({ [noun]: item });
    },
  });
  app.post(`${spec.path}/restore`, {
    config,
    schema: {
      tags: spec.tags,
      summary: `Restore a deleted ${noun}`,
      description: `Brings a ${noun} back from the trash (\`deletedAt\` null); records \`${noun}.restored\`. 404 for a live ${noun}, an unknown id, or one deleted longer ago than TRASH_RETENTION_DAYS.`,
      params: spec.params,
      response,
    },
    handler: async (request) => {
      const caller = callerOf(request);
      const opts = { ifMatch: ifMatchOf(request) };
      const item = await inTransaction(ctx, (trx) => spec.restore(trx, caller, request.params as P, opts));
      return ok({ [noun]: item });
    },
  });
}
