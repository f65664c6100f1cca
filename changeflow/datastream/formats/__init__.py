"""PyFlink's record formats of the DataStream connectors (``pyflink.datastream.formats``): ``json``."""
