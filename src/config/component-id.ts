// Component ids are `type` or `type/name`, as in the collector.
const COMPONENT_ID = /^[a-z][a-z0-9_]*(\/[^\s/]+)?$/;

export function isValidComponentId(id: string): boolean {
  return COMPONENT_ID.test(id);
}

export const COMPONENT_ID_HINT = 'component ids are `type` or `type/name` (type: lowercase letters, digits, _)';
