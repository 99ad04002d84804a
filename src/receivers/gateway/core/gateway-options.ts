// providerOptions.gateway, as every protocol's request carries it: the
// routing options of DESIGN section 7 (order, only, models).
import { z } from 'zod';

const slugList = z.array(z.string().min(1));

export const gatewayOptionsSchema = z.object({ order: slugList.optional(), only: slugList.optional(), models: slugList.optional() });
