/**
 * The order files start in: vitest's own (group, then project), except that the files named in
 * `longestFirst` start before the others of their project, longest first. Without a cache of earlier
 * runs (a fresh clone, CI) vitest starts files in the order it found them, and a file of a minute and
 * a half that starts last runs on alone while the other workers have nothing left to do.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export function longestFirstSequencer(longestFirst: readonly string[]) {
  return class LongestFirstSequencer extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      const sorted = await super.sort(files);
      const rank = (file: TestSpecification) => {
        const index = longestFirst.findIndex((name) => file.moduleId.endsWith(`/${name}`));
        return index < 0 ? longestFirst.length : index;
      };
      // By group and project as vitest sorts them; Array.prototype.sort is stable, so files of the
      // same rank keep vitest's order.
      return sorted.sort(
        (a, b) =>
          a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder ||
          (a.project.name < b.project.name ? -1 : a.project.name > b.project.name ? 1 : rank(a) - rank(b)),
      );
    }
  };
}
