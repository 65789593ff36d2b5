import type { Executor } from '../../db/database.js';

export interface AttachedIds {
  notes: string[];
  tasks: string[];
}

/** The ids of every note and task (live or trashed) on one of the items `targetIds` of the organization. */
export async function attachedTo(db: Executor, organizationId: string, targetIds: readonly string[]): Promise<AttachedIds> {
  if (targetIds.length === 0) return { notes: [], tasks: [] };
  const ids = (table: 'notes' | 'tasks') =>
    db.selectFrom(table).select('id').where('organization_id', '=', organizationId).where('target_id', 'in', [...targetIds]).orderBy('seq').execute();
  const [notes, tasks] = await Promise.all([ids('notes'), ids('tasks')]);
  return { notes: notes.map((r) => r.id), tasks: tasks.map((r) => r.id) };
}

/** Removes the notes and tasks for good, task reminders first (they reference their task). */
export async function deleteAttached(db: Executor, organizationId: string, a: AttachedIds): Promise<void> {
  if (a.tasks.length > 0) {
    await db.deleteFrom('task_reminders').where('task_id', 'in', a.tasks).execute();
    await db.deleteFrom('tasks').where('organization_id', '=', organizationId).where('id', 'in', a.tasks).execute();
  }
  if (a.notes.length > 0) await db.deleteFrom('notes').where('organization_id', '=', organizationId).where('id', 'in', a.notes).execute();
}

/**
 * Notes and tasks follow the item they are on into the trash and back: `deletedAt` is the item's trash time,
 * null when it is restored. Their own trash state is kept, so each comes back as it was.
 */
export async function followTarget(db: Executor, organizationId: string, targetId: string, deletedAt: string | null): Promise<void> {
  for (const table of ['notes', 'tasks'] as const) {
    await db.updateTable(table).set({ target_deleted_at: deletedAt }).where('organization_id', '=', organizationId).where('target_id', '=', targetId).execute();
  }
}
