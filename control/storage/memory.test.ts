import { runStoreConformance } from './conformance.js';
import { MemoryStore } from './memory.js';

runStoreConformance('memory', async () => new MemoryStore());
