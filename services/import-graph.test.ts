// The rooms of services/ and the order they stand in. A file imports only
// from its own room or from rooms on lower floors: no import circles, and
// nothing pointing back up (the gateway knows no capability; core knows
// nothing above it). A new folder must be given a floor here.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import ts from "typescript";

const SERVICES = new URL(".", import.meta.url).pathname;

/** Lowest first; rooms on one floor do not import each other. */
const FLOORS: string[][] = [
  ["core"],
  ["access", "fetch"],
  ["grpc"],
  ["contracts"],
  ["request-body"],
  ["gateway", "keys", "conversion", "telemetry"],
  // they use the conversion module
  ["annotation", "signing"],
  ["configuration.ts"],
  ["modules.ts", "module-set.ts"],
  ["main.ts"],
];

const floorOf = new Map(FLOORS.flatMap((rooms, floor) => rooms.map((room) => [room, floor] as const)));

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|mts)$/.test(name) && !/\.test\.ts$/.test(name) ? [path] : [];
  });
}

/** The room of a file: its top folder under services/, or the file itself at the top. */
const roomOf = (file: string) => relative(SERVICES, file).split("/")[0];

/** The files of services/ that `file` imports (statically or by import()), as paths. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  return importedFiles
    .map((imported) => imported.fileName)
    .filter((name) => name.startsWith("."))
    .map((name) => resolve(dirname(file), name).replace(/\.js$/, ".ts"))
    .filter((path) => path.startsWith(SERVICES));
}

const files = sourceFiles(SERVICES);
const graph = new Map(files.map((file) => [file, importsOf(file)]));

test("every room of services/ has a floor", () => {
  const rooms = [...new Set(files.map(roomOf))];
  assert.deepEqual(rooms.filter((room) => !floorOf.has(room)), []);
});

test("no import points back up, or across to a room on the same floor", () => {
  const wrong: string[] = [];
  for (const [file, imports] of graph) {
    for (const imported of imports) {
      const [from, to] = [roomOf(file), roomOf(imported)];
      if (from !== to && floorOf.get(to)! >= floorOf.get(from)!) wrong.push(`${relative(SERVICES, file)} -> ${relative(SERVICES, imported)}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test("no import circles between files", () => {
  // Tarjan's strongly connected components: a component of more than one file is a circle
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const circles: string[][] = [];
  const visit = (file: string) => {
    order.set(file, index);
    low.set(file, index++);
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (!order.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(file, Math.min(low.get(file)!, order.get(next)!));
    }
    if (low.get(file) === order.get(file)) {
      const component: string[] = [];
      let member: string;
      do component.push((member = stack.pop()!));
      while (member !== file);
      if (component.length > 1) circles.push(component.map((path) => relative(SERVICES, path)));
    }
  };
  for (const file of graph.keys()) if (!order.has(file)) visit(file);
  assert.deepEqual(circles, []);
});
