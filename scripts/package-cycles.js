/**
 * Cycles between workspace packages in a dependency-cruiser module list: each module belongs
 * to the package of its folder (libs/<name>, services/<name>), tests included, and a package
 * depends on another when any of its modules imports one of the other's.
 */

/** `libs/http/src/app.ts` -> `libs/http`; a file outside libs/ and services/ has no package. */
function packageOf(source) {
  const m = /^(libs|services)\/[^/]+/.exec(source);
  return m ? m[0] : undefined;
}

/** Package -> the set of packages it imports (itself excluded). */
function packageGraph(modules) {
  const graph = new Map();
  for (const mod of modules) {
    const from = packageOf(mod.source);
    if (!from) continue;
    if (!graph.has(from)) graph.set(from, new Set());
    for (const dep of mod.dependencies ?? []) {
      const to = packageOf(dep.resolved ?? '');
      if (to && to !== from) graph.get(from).add(to);
    }
  }
  return graph;
}

/**
 * The strongly connected components of more than one package (Tarjan), each as a sorted
 * list of package names, plus one path around it to show in the message.
 */
function packageCycles(modules) {
  const graph = packageGraph(modules);
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  let next = 0;
  const visit = (node) => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node), low.get(to)));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node), index.get(to)));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components.map((members) => ({ members, path: pathAround(graph, members) }));
}

/** A path from the component's first package back to itself, through members only. */
function pathAround(graph, members) {
  const inside = new Set(members);
  const start = members[0];
  const previous = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const to of graph.get(node) ?? []) {
      if (!inside.has(to)) continue;
      if (to === start) {
        const route = [start];
        for (let at = node; at !== undefined && at !== start; at = previous.get(at)) route.splice(1, 0, at);
        return [...route, start];
      }
      if (!previous.has(to)) {
        previous.set(to, node);
        queue.push(to);
      }
    }
  }
  return members;
}

module.exports = { packageOf, packageGraph, packageCycles };
