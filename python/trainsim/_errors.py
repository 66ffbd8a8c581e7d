"""trainsim's Python exceptions (docs/python.md, "Errors")."""


class ScenarioError(ValueError):
    """A scenario, sweep spec or cluster the reader refuses.

    The message is the one `trainsim` prints ("FILE: /json/pointer: expected X,
    found Y"); its parts are attributes:

    file      the file read, "<dict>" for a dict, None when there is none
    pointer   the JSON pointer (RFC 6901) of the value, "" for the whole document
    expected  what was expected, None when the message is given whole
    found     what was found, None when the message is given whole
    """

    def __init__(self, message, file=None, pointer="", expected=None, found=None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.pointer = pointer
        self.expected = expected
        self.found = found

    @property
    def json_path(self):
        """The JSON pointer, by the name the C++ error class gives it."""
        return self.pointer
