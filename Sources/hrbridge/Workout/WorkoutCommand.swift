import ArgumentParser
import SensorSimulator

/// `hrbridge workout …`: run workouts.
struct WorkoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workout",
        abstract: "Run workouts with live statistics, zones, HRV and energy.",
        subcommands: [WorkoutRunCommand.self, WorkoutScenarioCommand.self]
    )
}

/// `hrbridge workout scenario`: print the built-in scenario as a starting point for your own.
struct WorkoutScenarioCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenario",
        abstract: "Print the built-in simulator scenario (JSON), or check a scenario file.",
        discussion: "With --check FILE: prints every problem in FILE with its JSON path and exits 65, or exits 0."
    )

    @Option(help: "A scenario file to validate instead of printing the built-in one.")
    var check: String?

    func run() throws {
        if let check {
            do {
                _ = try ScenarioParser.load(path: check)
                print("\(check): ok")
            } catch {
                StandardError.write(error.description)
                throw ExitCode(65)
            }
        } else {
            print(Scenario.defaultJSON)
        }
    }
}
