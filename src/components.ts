// Every component compiled into sluice. Add one line per component folder:
//   import { otlpReceiverFactory } from './receivers/otlp/factory.js';
// and list it in register(...) below (sections with registerTopLevelSection).
import { ComponentRegistry } from './core/registry.js';
import { otlpReceiverFactory } from './receivers/otlp/factory.js';

export function builtinRegistry(): ComponentRegistry {
  return new ComponentRegistry().register(otlpReceiverFactory);
}
