// Limits shared by the YAML `drains:` list and the drains API.
export const MAX_NAME_LENGTH = 128;
export const MAX_HEADERS = 20;
export const MAX_RULES = 100;
export const MAX_DRAINS = 1000;
