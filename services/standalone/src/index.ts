export { startEmbedded, type Embedded, type EmbeddedOptions } from './embedded';
export { embeddedServiceSettings, standaloneEnv } from './config';
