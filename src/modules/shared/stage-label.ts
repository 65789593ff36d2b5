/**
 * A stage as people read it in an event's description: its label, or its key when the stage is no longer
 * defined (a move out of a stage being removed). The event's `changes` keep the keys, for programs.
 */
export function stageLabel(stages: readonly { key: string; label: string }[], key: string | null | undefined): string {
  if (key === null || key === undefined) return 'no stage';
  return stages.find((s) => s.key === key)?.label ?? key;
}
