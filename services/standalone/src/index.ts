export { startEmbedded, type Embedded, type EmbeddedOptions } from './embedded';
