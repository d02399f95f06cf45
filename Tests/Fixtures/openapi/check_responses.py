"""Checks API responses against the OpenAPI document, both ways.

usage: check_responses.py [--validate-only] OPENAPI.json OBSERVED.jsonl

Each line of OBSERVED is {"method", "path" (the document's template), "status", "body"}. Every body
is validated with jsonschema-rs (JSON Schema 2020-12, as OpenAPI 3.1 uses) against the response
schema the document gives for that operation and status; the component schemas say
"additionalProperties": false, so a key the code writes and the document does not name fails.
The other way: every property of every component schema the responses reached must have been
seen at least once, unless listed in MAY_BE_ABSENT (keys that only appear in states the test does
not reach), so a key the document names and the code never writes fails too.
--validate-only checks the bodies against their schemas only (a test that reaches a few responses).
Prints one line per problem; exit status 1 when there is any.
"""
import json
import sys

import jsonschema_rs

MAY_BE_ABSENT = {
    ("Health", "problems"), ("Health", "store"), ("Session", "store"), ("Session", "saved"),
    ("StoreHealth", "waiting"), ("StoreHealth", "spilled"), ("StoreHealth", "lost"), ("StoreHealth", "error"),
    ("Threshold", "alpha1"), ("Threshold", "heartRate"), ("Threshold", "power"),
    ("Sample", "source"), ("PlanStep", "name"),
    # Only with [peripheral] enabled (a daemon on BlueZ): checked by DaemonBlueZTests' peripheral test.
    ("Health", "peripheral"),
}
MUST_BE_REACHED = {
    "Error", "Health", "Sensor", "Session", "Statistics", "ZoneDuration", "Zone", "HRVWindow", "ArtefactCounts",
    "Alpha1Summary", "WorkoutEvent", "WorkoutActivity", "Summary", "PlanStep", "PlanStatus", "WorkoutListing",
    "Workout", "Athlete", "Sample", "Class", "ClassMember",
}


def resolve(document, reference):
    node = document
    for part in reference[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def response_schema(document, method, path, status):
    """The JSON schema of that response's body, or a problem."""
    responses = document["paths"][path][method]["responses"]
    response = responses.get(str(status))
    if response is None:
        return None, "the document has no %s response for %s %s" % (status, method.upper(), path)
    if "$ref" in response:
        response = resolve(document, response["$ref"])
    content = response.get("content", {}).get("application/json")
    if content is None:
        return None, "the document's %s response for %s %s has no JSON body" % (status, method.upper(), path)
    return content["schema"], None


def walk(document, schema, instance, seen, reached, component=None):
    """Records which component properties the instance holds."""
    while "$ref" in schema:
        reference = schema["$ref"]
        if reference.startswith("#/components/schemas/"):
            component = reference.rsplit("/", 1)[1]
            reached.add(component)
        schema = resolve(document, reference)
    if "oneOf" in schema:
        for branch in schema["oneOf"]:
            wanted = branch.get("type")
            if instance is None and wanted == "null":
                return
            if instance is not None and wanted != "null":
                walk(document, branch, instance, seen, reached, component)
                return
        return
    if isinstance(instance, dict):
        properties = schema.get("properties", {})
        for key, value in instance.items():
            if key in properties:
                if component:
                    seen.add((component, key))
                walk(document, properties[key], value, seen, reached, None)
            elif isinstance(schema.get("additionalProperties"), dict):
                walk(document, schema["additionalProperties"], value, seen, reached, None)
    elif isinstance(instance, list) and isinstance(schema.get("items"), dict):
        for item in instance:
            walk(document, schema["items"], item, seen, reached, None)


def main():
    arguments = [argument for argument in sys.argv[1:] if argument != "--validate-only"]
    both_ways = len(arguments) == len(sys.argv) - 1
    document = json.load(open(arguments[0]))
    problems = []
    seen, reached = set(), set()
    count = 0
    for line in open(arguments[1]):
        observed = json.loads(line)
        method, path, status = observed["method"].lower(), observed["path"], observed["status"]
        schema, problem = response_schema(document, method, path, status)
        if problem:
            problems.append(problem)
            continue
        # The response's schema at the root, the components beside it for its references.
        root = dict(schema)
        root["components"] = document["components"]
        validator = jsonschema_rs.Draft202012Validator(root)
        for error in validator.iter_errors(observed["body"]):
            problems.append("%s %s %s: %s at %s" % (
                method.upper(), path, status, error.message, "/".join(str(p) for p in error.instance_path)))
        walk(document, schema, observed["body"], seen, reached)
        count += 1
    for name in sorted(MUST_BE_REACHED - reached) if both_ways else []:
        problems.append("no response reached the schema %s" % name)
    for name in sorted(reached) if both_ways else []:
        schema = document["components"]["schemas"][name]
        for key in schema.get("properties", {}):
            if (name, key) not in seen and (name, key) not in MAY_BE_ABSENT:
                problems.append("%s.%s is in the document but no response had it" % (name, key))
    for problem in problems:
        print(problem)
    print("checked %d responses, %d schemas reached, %d problems" % (count, len(reached), len(problems)))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
