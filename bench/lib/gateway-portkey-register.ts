// `node --import dist/bench/lib/gateway-portkey-register.js ...`: installs the
// resolve hook of gateway-portkey-hooks.ts before Portkey's code loads.
import { register } from 'node:module';

register('./gateway-portkey-hooks.js', import.meta.url);
