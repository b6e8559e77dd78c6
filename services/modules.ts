import { annotationModule } from "./annotation/module.js";
import type { Module } from "./contracts/module.js";
import { conversionModule } from "./conversion/module.js";
import { keysModule } from "./keys/module.js";
import { signingModule } from "./signing/module.js";
import { aggregatorModule, telemetryModule } from "./telemetry/module.js";

/** Every capability, in the order a process starts them: a module comes after the ones it uses. */
export const MODULES: readonly Module<any>[] = [keysModule, conversionModule, annotationModule, signingModule, telemetryModule, aggregatorModule];
