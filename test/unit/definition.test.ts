import { describe, expect, it } from 'vitest';
import { definitionErrors, diffDefinitions, type Definition, type Field } from '../../src/modules/objects/definition.js';
import { plannedFireAt } from '../../src/modules/objects/reminders.service.js';

const f = (key: string, type: Field['type'], extra: Partial<Field> = {}): Field => ({ key, label: key, type, required: false, ...extra });

describe('definitionErrors', () => {
  it('accepts a well-formed definition', () => {
    expect(definitionErrors({ fields: [f('a', 'text'), f('b', 'select', { options: ['x'] }), f('c', 'date', { role: 'due' })], stages: [{ key: 's', label: 'S' }] })).toEqual([]);
  });
});

describe('diffDefinitions', () => {
  const before: Definition = {
    fields: [f('keep', 'text'), f('gone', 'text'), f('retyped', 'text'), f('tier', 'select', { options: ['a', 'b', 'c'] }), f('req', 'text'), f('due', 'date', { role: 'due' })],
    stages: [{ key: 'open', label: 'Open' }, { key: 'closed', label: 'Closed' }],
  };

  it('finds removed and retyped fields, dropped options, newly required and role changes, removed stages', () => {
    const after: Definition = {
      fields: [f('keep', 'text', { label: 'Relabelled' }), f('retyped', 'number'), f('tier', 'select', { options: ['a', 'd'] }), f('req', 'text', { required: true }), f('due', 'date'), f('new_req', 'text', { required: true })],
      stages: [{ key: 'closed', label: 'Done' }, { key: 'new', label: 'New' }],
    };
    const change = diffDefinitions(before, after);
    expect(change.removedFields.map((x) => x.key)).toEqual(['gone']);
    expect(change.retypedFields.map((x) => [x.before.type, x.after.type, x.index])).toEqual([['text', 'number', 1]]);
    expect(change.removedOptions).toEqual([{ field: after.fields[2], index: 2, options: ['b', 'c'] }]);
    expect(change.newlyRequired.map((x) => [x.field.key, x.index])).toEqual([['req', 3], ['new_req', 5]]);
    expect(change.roleChanged.map((x) => x.field.key)).toEqual(['due']);
    expect(change.removedStages.map((s) => s.key)).toEqual(['open']);
  });

  it('finds nothing for relabels, added options, fields and stages', () => {
    const after: Definition = {
      fields: [...before.fields.map((x) => ({ ...x, label: `${x.label}!` })), f('extra', 'number')],
      stages: [...before.stages, { key: 'later', label: 'Later' }],
    };
    after.fields[3] = f('tier', 'select', { options: ['a', 'b', 'c', 'd'] });
    expect(diffDefinitions(before, after)).toEqual({ removedFields: [], retypedFields: [], removedOptions: [], newlyRequired: [], roleChanged: [], removedStages: [] });
  });
});

describe('plannedFireAt', () => {
  it('is 09:00 local on the due day, including DST days and gaps', () => {
    expect(plannedFireAt('2026-03-29', 'Europe/Paris', new Date('2026-03-01T00:00:00Z'))).toBe('2026-03-29T07:00:00.000Z');
    expect(plannedFireAt('2026-11-01', 'America/New_York', new Date('2026-10-01T00:00:00Z'))).toBe('2026-11-01T14:00:00.000Z');
    expect(plannedFireAt('2026-06-10', 'UTC', new Date('2026-06-10T23:59:59.999Z'))).toBe('2026-06-10T09:00:00.000Z');
  });

  it('is null once the local date is after the due day', () => {
    expect(plannedFireAt('2026-06-10', 'UTC', new Date('2026-06-11T00:00:00.000Z'))).toBeNull();
    expect(plannedFireAt('2026-06-10', 'Pacific/Auckland', new Date('2026-06-10T12:00:00.000Z'))).toBeNull();
    expect(plannedFireAt('2026-06-10', 'America/Los_Angeles', new Date('2026-06-11T06:59:59.999Z'))).toBe('2026-06-10T16:00:00.000Z');
  });
});
