// Chat parameters only OpenAI-compatible upstreams take: every other
// provider type answers them 400 unsupported_value.
export const OPENAI_ONLY = [
  { functions: [{ name: 'get_weather', parameters: { type: 'object', properties: {} } }], function_call: 'auto' },
  { function_call: { name: 'get_weather' } },
  { modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } },
  { audio: { voice: 'alloy', format: 'wav' } },
  { web_search_options: {} },
  { verbosity: 'low' },
];

/** What those parameters' neutral values look like: leaving them out changes nothing. */
export const OPENAI_ONLY_NEUTRAL = { functions: [], function_call: 'none', modalities: ['text'], audio: null, web_search_options: null, verbosity: 'medium' };
