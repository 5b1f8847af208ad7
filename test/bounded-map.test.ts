import { describe, expect, it } from 'vitest';
import { BoundedMap } from '../src/lib/bounded-map';

describe('BoundedMap', () => {
  it('drops the oldest written entry first; reads never reorder, a write moves a key to the newest place', () => {
    const map = new BoundedMap<string, number>({ entries: 3 });
    map.set('a', 1);
    map.set('b', 2);
    map.set('c', 3);
    expect(map.get('a')).toBe(1);
    map.set('d', 4);
    expect(map.has('a')).toBe(false);
    map.set('b', 20);
    map.set('e', 5);
    expect([map.has('b'), map.has('c'), map.has('d'), map.has('e')]).toEqual([true, false, true, true]);
    expect(map.size).toBe(3);
  });

  it('bounds the total weight, and keeps an entry heavier than the bound alone', () => {
    const map = new BoundedMap<string, string>({ entries: 10, weight: 10 }, { weight: (key, value) => key.length + value.length });
    map.set('a', 'xxxx');
    map.set('b', 'yyyy');
    expect(map.weight).toBe(10);
    map.set('c', 'z');
    expect([map.has('a'), map.has('b'), map.has('c'), map.weight]).toEqual([false, true, true, 7]);
    map.set('d', 'w'.repeat(20));
    expect([map.size, map.weight]).toEqual([1, 21]);
  });

  it('counts entries as measured, and replaces a value where it stands', () => {
    const map = new BoundedMap<string, number[]>({ entries: 4 }, { entries: (_key, list) => list.length });
    map.set('a', [1, 2]);
    map.set('b', [3]);
    expect(map.replace('a', [1])).toBe(true);
    expect(map.replace('z', [1])).toBe(false);
    expect(map.entries).toBe(2);
    map.set('c', [4, 5, 6]);
    expect([map.has('a'), map.has('b'), map.entries]).toEqual([false, true, 4]);
    map.delete('c');
    expect([map.size, map.entries]).toEqual([1, 1]);
  });

  it('reads its bounds at every write', () => {
    const bounds = { entries: 3 };
    const map = new BoundedMap<number, number>(bounds);
    for (let i = 0; i < 3; i++) map.set(i, i);
    bounds.entries = 1;
    map.set(3, 3);
    expect([map.size, map.has(3)]).toEqual([1, true]);
  });
});
