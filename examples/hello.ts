// A first snippet: top-level await, console output (goes to stderr), and a
// returned value (printed as JSON on stdout).
interface Point { x: number; y: number }

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const points: Point[] = [{ x: 1, y: 2 }, { x: 3, y: 4 }];
await wait(10);
console.log(`summing ${points.length} points`);
return points.reduce((acc, p) => ({ x: acc.x + p.x, y: acc.y + p.y }), { x: 0, y: 0 });
