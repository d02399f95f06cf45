import ArgumentParser
import SensorSimulator

/// `hrbridge workout …`: run workouts.
struct WorkoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workout",
        abstract: "Run workouts with live statistics, zones, HRV and energy.",
        subcommands: [WorkoutRunCommand.self, WorkoutRecoverCommand.self, WorkoutScenarioCommand.self]
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

/// `hrbridge workout recover`: continue the athlete's interrupted workout (`workout run --recover`).
struct WorkoutRecoverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recover",
        abstract: "Continue an interrupted workout (after a crash or power loss): `workout run --recover`.",
        discussion: """
            Takes the options of `workout run` (--athlete, --store, --adapter, --duration, --json…). The
            workout's state, events, activities and zones come back from the store's journal;
            statistics are recomputed from the stored samples; the sensors reconnect and it goes on.
            Exit status 66 when the athlete has no unfinished workout.
            """)

    @Argument(parsing: .captureForPassthrough, help: "Options of `workout run`.")
    var arguments: [String] = []

    func run() async throws {
        let command = try WorkoutRunCommand.parse(
            handedOn: arguments + ["--recover"], by: "workout recover", abstract: Self.configuration.abstract)
        try await command.run()
    }
}
